'use strict';
// Three latchd processes on loopback as one Raft cluster (docs/CLUSTER.md), for the tests of
// unmodified Sentinel clients.
//
// Contract: start() resolves once every node answers PING (bounded by READY_TIMEOUT_MS) and
// rejects otherwise, leaving no child behind; stop() reaps every child and removes the Raft
// directories. Ports are picked at run time (raft-peers names them all before any node
// starts). Children die with this process (setpriv --pdeathsig, and a kill on 'exit').

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { answersPing, freePort, spawnTiedToParent } = require('./server_process');

const READY_TIMEOUT_MS = 15000;
const NODES = 3;

const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

class LatchdCluster {
  constructor(extraArgs = []) {
    this.binary = process.env.LATCHD;
    if (!this.binary) throw new Error('LATCHD must name the latchd binary');
    fs.accessSync(this.binary, fs.constants.X_OK);
    this.extraArgs = extraArgs;
    this.ports = []; // client ports, one per node
    this.raftPorts = [];
    this.children = new Array(NODES).fill(null);
    this.exited = new Array(NODES).fill(null);
    this.output = new Array(NODES).fill('');
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'latch-compat-cluster-'));
    this.killOnExit = () => {
      for (const child of this.children) if (child) child.kill('SIGKILL');
    };
  }

  async start() {
    const picked = new Set();
    while (picked.size < 2 * NODES) picked.add(await freePort());
    const ports = [...picked];
    this.raftPorts = ports.slice(0, NODES);
    this.ports = ports.slice(NODES);
    const peers = this.ports.map((port, i) => `${i + 1}=127.0.0.1:${this.raftPorts[i]}:${port}`)
      .join(' ');
    process.on('exit', this.killOnExit);
    try {
      for (let i = 0; i < NODES; i += 1) this.spawnNode(i, peers);
      const deadline = Date.now() + READY_TIMEOUT_MS;
      for (let i = 0; i < NODES; i += 1) {
        while (!(await answersPing(this.ports[i]))) {
          if (this.children[i] === null || Date.now() > deadline) {
            throw new Error(`latchd node ${i + 1} did not start:\n${this.logs()}`);
          }
          await delay(50);
        }
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
    return this;
  }

  spawnNode(i, peers) {
    const raftDir = path.join(this.dir, `node${i + 1}`);
    fs.mkdirSync(raftDir, { recursive: true });
    const child = spawnTiedToParent(this.binary, ['--port', `${this.ports[i]}`, '--bind',
      '127.0.0.1', '--raft-id', `${i + 1}`, '--raft-peers', peers, '--raft-dir', raftDir,
      ...this.extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.children[i] = child;
    this.exited[i] = new Promise((resolve) => child.once('exit', resolve)).then(() => {
      if (this.children[i] === child) this.children[i] = null;
    });
    child.stdout.on('data', (chunk) => { this.output[i] += chunk; });
    child.stderr.on('data', (chunk) => { this.output[i] += chunk; });
  }

  nodeOfPort(port) { return this.ports.indexOf(Number(port)); }

  // SIGKILL node i; resolves once it is reaped.
  async kill9(i) {
    const child = this.children[i];
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited[i];
  }

  logs() {
    return this.output.map((text, i) => `--- node ${i + 1}\n${text}`).join('');
  }

  async stop() {
    for (let i = 0; i < NODES; i += 1) {
      const child = this.children[i];
      if (!child) continue;
      child.kill('SIGTERM');
      let timer;
      const timedOut = new Promise((resolve) => { timer = setTimeout(resolve, 5000, false); });
      const stopped = await Promise.race([this.exited[i].then(() => true), timedOut]);
      clearTimeout(timer);
      if (!stopped) {
        child.kill('SIGKILL');
        await this.exited[i];
      }
    }
    process.removeListener('exit', this.killOnExit);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

module.exports = { LatchdCluster };
