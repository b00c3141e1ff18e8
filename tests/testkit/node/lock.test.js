'use strict';
// docs/TESTING.md, example 2: a lock built on ioredis (SET NX PX to acquire, a compare-and-
// delete script to release), tested with Node's built-in runner against a latchd started per
// test with its test commands on and a manual clock. LATCHD names the binary (ctest sets it);
// NODE_PATH must reach ioredis (tests/compat/node installs it).
const { test, beforeEach, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const net = require('node:net');
const crypto = require('node:crypto');
const Redis = require('ioredis');

const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then " +
                "return redis.call('del', KEYS[1]) else return 0 end";

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}

// Starts latchd and resolves once it answers PING (bounded); the caller stops it.
async function startLatchd() {
  const port = await freePort();
  const child = spawn(process.env.LATCHD || 'latchd',
    ['--port', String(port), '--bind', '127.0.0.1', '--enable-test-commands', 'yes',
     '--clock', 'manual', '--loglevel', 'warning'], { stdio: 'ignore' });
  const probe = new Redis({ port, lazyConnect: true, retryStrategy: null, maxRetriesPerRequest: 0 });
  probe.on('error', () => {});
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return { child, port };
    } catch {
      probe.disconnect();
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  child.kill('SIGKILL');
  throw new Error('latchd did not answer PING');
}

let server;
let redis;
beforeEach(async () => {
  server = await startLatchd();
  redis = new Redis({ port: server.port });
});
afterEach(async () => {
  redis.disconnect();
  server.child.kill('SIGTERM');
  await new Promise((r) => server.child.once('exit', r));
});

const acquire = (key, token, ttlMs) => redis.set(key, token, 'PX', ttlMs, 'NX');
const release = (key, token) => redis.eval(RELEASE, 1, key, token);
const advance = (ms) => redis.call('TEST.CLOCK', 'ADVANCE', ms);

test('a lease runs out when the clock moves past its TTL, and a late release is refused', async () => {
  assert.equal(await acquire('job', 'a', 30000), 'OK');
  await advance(29999);
  assert.equal(await acquire('job', 'b', 30000), null);  // 1 ms left: still held
  await advance(1);
  assert.equal(await acquire('job', 'b', 30000), 'OK');  // 30 s later, without sleeping
  assert.equal(await release('job', 'a'), 0);            // not ours any more
  assert.equal(await redis.get('job'), 'b');
});

test('a dropped reply: the SET happened, the client was never told', async () => {
  await redis.call('TEST.FAULT', 'DROP', 'COMMAND', 'set', 'KEY', 'job');
  const token = crypto.randomUUID();
  // ioredis reconnects and re-sends the unanswered SET NX, which now finds the key held (by
  // us): naive code concludes it did not get the lock.
  assert.equal(await acquire('job', token, 30000), null);
  // Survival: compare the owner instead of trusting the reply.
  assert.equal(await redis.get('job'), token);
  assert.equal(await release('job', token), 1);
  const info = await redis.info('faults');
  assert.match(info, /fault_dropped_replies:1\r\n/);
});

test('delayed and failing commands, counted', async () => {
  await redis.call('TEST.FAULT', 'DELAY', '100', 'COMMAND', 'get');
  await redis.call('TEST.FAULT', 'ERROR', 'BUSY try later', 'COMMAND', 'set', 'COUNT', '2');
  const start = Date.now();
  assert.equal(await redis.get('job'), null);
  assert.ok(Date.now() - start >= 100);
  await assert.rejects(acquire('job', 'a', 1000), /BUSY try later/);
  await assert.rejects(acquire('job', 'a', 1000), /BUSY try later/);
  assert.equal(await acquire('job', 'a', 1000), 'OK');
  const counts = await redis.call('TEST.COUNTS');
  assert.deepEqual(counts.slice(counts.indexOf('set'), counts.indexOf('set') + 2), ['set', 3]);
});
