'use strict';
// Runs the server under test as a child process on a free loopback port.
//
// COMPAT_SERVER names the server: "redis" (redis-server from PATH, or REDIS_SERVER) or "latchd"
// (the binary named by LATCHD, which ctest sets to the one it built). The same library test then
// runs against both, so a difference between them is a failing test.
//
// Contract: start() resolves only once the server answers PING (bounded by READY_TIMEOUT_MS)
// and rejects otherwise, leaving no child behind; stop() always reaps the child. A child still
// running when this process exits (a failed test, an uncaught error) is killed on 'exit'; when
// this process is killed outright (a ctest timeout), util-linux's setpriv --pdeathsig, which
// the child is started through, has the kernel kill it too.
//
// Debugging: with COMPAT_TRAFFIC_LOG=<file>, `port` is that of tools/traffic_proxy.py placed in
// front of the server, which logs every byte both ways to the file (latchd has no MONITOR).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const readline = require('node:readline');

const READY_TIMEOUT_MS = 15000;
const STOP_TIMEOUT_MS = 5000;
const START_ATTEMPTS = 3; // a free port can be taken by someone else before the child binds it
const TRAFFIC_PROXY = path.join(__dirname, '..', '..', 'tools', 'traffic_proxy.py');
const SETPRIV = '/usr/bin/setpriv';

// Spawns binary so that the kernel kills it with SIGKILL if this process dies first.
function spawnTiedToParent(binary, args, options) {
  if (fs.existsSync(SETPRIV)) {
    return spawn(SETPRIV, ['--pdeathsig', 'KILL', '--', binary, ...args], options);
  }
  return spawn(binary, args, options);
}

function serverKind() {
  const kind = process.env.COMPAT_SERVER || 'redis';
  if (kind !== 'redis' && kind !== 'latchd') {
    throw new Error(`COMPAT_SERVER must be 'redis' or 'latchd', not '${kind}'`);
  }
  return kind;
}

// A port that is free on 127.0.0.1 right now (the kernel picks it).
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

// Resolves true when a fresh connection gets an answer to an inline PING within one second:
// +PONG, or -NOAUTH from a server started with --requirepass.
function answersPing(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const finish = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once('error', () => finish(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) {
        finish(reply === '+PONG\r\n' || reply.startsWith('-NOAUTH '));
      }
    });
  });
}

const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls the (async) condition every 5 ms until it holds or timeoutMs pass; resolves to its
// last value. Tests wait for what they need this way, never for a guessed time.
async function waitUntil(condition, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return true;
    await delay(5);
  }
  return Boolean(await condition());
}

class ServerProcess {
  // extraArgs: more directives for both servers, e.g. ['--requirepass', 'secret'].
  constructor({ kind = serverKind(), extraArgs = [] } = {}) {
    this.kind = kind;
    this.extraArgs = extraArgs;
    this.port = null; // what clients connect to (the proxy's port when logging traffic)
    this.serverPort = null;
    this.child = null;
    this.proxy = null;
    this.output = '';
    this.killOnExit = () => {
      if (this.child) this.child.kill('SIGKILL');
      if (this.proxy) this.proxy.kill('SIGKILL');
    };
  }

  command(port) {
    if (this.kind === 'redis') {
      const binary = process.env.REDIS_SERVER || 'redis-server';
      return [binary, ['--port', `${port}`, '--bind', '127.0.0.1', '--save', '',
        '--appendonly', 'no', ...this.extraArgs]];
    }
    const binary = process.env.LATCHD;
    if (!binary) throw new Error('LATCHD must name the latchd binary');
    fs.accessSync(binary, fs.constants.X_OK);
    return [binary, ['--port', `${port}`, '--bind', '127.0.0.1', ...this.extraArgs]];
  }

  async start() {
    const failures = [];
    for (let attempt = 0; attempt < START_ATTEMPTS; attempt += 1) {
      const port = await freePort();
      if (await this.tryStart(port, failures)) {
        this.serverPort = port;
        this.port = port;
        if (process.env.COMPAT_TRAFFIC_LOG) await this.startProxy(process.env.COMPAT_TRAFFIC_LOG);
        return this;
      }
    }
    throw new Error(`${this.kind} did not start:\n${failures.join('\n')}`);
  }

  async tryStart(port, failures) {
    const [binary, args] = this.command(port);
    this.output = '';
    const child = spawnTiedToParent(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    process.on('exit', this.killOnExit);
    let exited = false;
    const exitedPromise = new Promise((resolve) => child.once('exit', resolve));
    exitedPromise.then(() => { exited = true; });
    child.once('error', (error) => { this.output += `spawn error: ${error.message}\n`; });
    child.stdout.on('data', (chunk) => { this.output += chunk; });
    child.stderr.on('data', (chunk) => { this.output += chunk; });
    this.exited = exitedPromise;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    while (Date.now() < deadline && !exited) {
      if (await answersPing(port)) return true;
      await delay(50);
    }
    failures.push(`port ${port}: exited=${exited}, output:\n${this.output}`);
    await this.stop();
    return false;
  }

  async startProxy(logPath) {
    this.proxy = spawnTiedToParent('python3', [TRAFFIC_PROXY, '--target-port', `${this.serverPort}`,
      '--log', logPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = readline.createInterface({ input: this.proxy.stdout });
    const [line] = await Promise.race([
      new Promise((resolve) => lines.once('line', (first) => resolve([first]))),
      new Promise((resolve) => this.proxy.once('exit', () => resolve([null]))),
    ]);
    lines.close();
    if (!line) throw new Error('traffic_proxy.py did not start');
    this.port = Number(line);
  }

  async stop() {
    if (this.proxy) {
      this.proxy.kill('SIGKILL');
      this.proxy = null;
    }
    const child = this.child;
    if (!child) return;
    this.child = null;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      let timer;
      const timedOut = new Promise((resolve) => { timer = setTimeout(resolve, STOP_TIMEOUT_MS, false); });
      const stopped = await Promise.race([this.exited.then(() => true), timedOut]);
      clearTimeout(timer); // a pending timer would keep node alive after the last test
      if (!stopped) {
        child.kill('SIGKILL');
        await this.exited;
      }
    }
    process.removeListener('exit', this.killOnExit);
  }
}

module.exports = {
  ServerProcess, answersPing, freePort, serverKind, spawnTiedToParent, waitUntil,
};
