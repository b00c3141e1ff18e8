'use strict';
// ioredis 5.9.3 in Sentinel mode (`sentinels` + `name`), unmodified, with redlock
// 5.0.0-beta.2 on top, against a three-node latchd cluster. Each node answers Sentinel's
// discovery commands for the master `latch` (the Raft leader): ioredis asks a sentinel for
// SENTINEL get-master-addr-by-name, learns the other sentinels from SENTINEL sentinels, checks
// the role INFO reports, and after kill -9 of the leader reconnects through the sentinels to
// the next one, replaying the commands it queued meanwhile. What fails during the failover is
// retried by the test, as an application would around a Redis Sentinel failover. Every wait is
// bounded.

const assert = require('node:assert/strict');
const { after, before, describe, it } = require('node:test');
const Redis = require('ioredis');
const RedlockModule = require('redlock');
const { LatchdCluster } = require('./support/latchd_cluster');
const { requirePinnedVersions } = require('./support/pinned');

const Redlock = RedlockModule.default;
const { ExecutionError } = RedlockModule;

const TEST_TIMEOUT_MS = 90000;
// An election takes one to two election timeouts (1 s), a split vote more.
const FAILOVER_TIMEOUT_MS = 30000;

const delay = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// Runs action until it resolves without a failover error (connection errors, -TRYAGAIN, a
// refused Redlock quorum); its result. Polls every 20 ms.
async function retryThroughFailover(action, timeoutMs = FAILOVER_TIMEOUT_MS) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await action();
    } catch (error) {
      const transient = error instanceof ExecutionError ||
        /TRYAGAIN|ECONNREFUSED|ECONNRESET|Connection is closed|max retries/i.test(error.message);
      if (!transient || Date.now() > deadline) throw error;
    }
    await delay(20);
  }
}

describe('ioredis Sentinel mode + redlock against a latchd cluster', () => {
  let cluster;
  let client;

  before(async () => {
    requirePinnedVersions();
    cluster = await new LatchdCluster().start();
    // ioredis is given one sentinel, the leader's node, which the test kills: it must have
    // learned the other nodes from SENTINEL sentinels to find the next leader.
    const probe = new Redis({ host: '127.0.0.1', port: cluster.ports[0], lazyConnect: true });
    let address = null;
    try {
      address = await retryThroughFailover(async () => {
        const reply = await probe.sentinel('get-master-addr-by-name', 'latch');
        if (reply === null) throw new Error('TRYAGAIN: no leader yet');
        return reply;
      });
    } finally {
      probe.disconnect();
    }
    client = new Redis({
      sentinels: [{ host: '127.0.0.1', port: Number(address[1]) }],
      name: 'latch',
      connectTimeout: 2000,
      sentinelRetryStrategy: () => 50,
    });
    client.on('error', () => {}); // surfaced by the failing command instead
  });

  after(async () => {
    if (client) client.disconnect();
    if (cluster) await cluster.stop();
  });

  // The node ioredis is connected to, as the leader names itself in ROLE.
  async function connectedNode() {
    const role = await retryThroughFailover(() => client.role());
    assert.equal(role[0], 'master');
    return cluster.nodeOfPort(client.stream.remotePort);
  }

  it('takes locks on the leader before and after kill -9 of the leader',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const redlock = new Redlock([client], { retryCount: 0 });
      const first = await retryThroughFailover(() => redlock.acquire(['compat:ioredis:a'], 30000));
      assert.equal(await client.get('compat:ioredis:a'), first.value);
      await first.release();
      assert.equal(await client.exists('compat:ioredis:a'), 0);
      const old = await connectedNode();
      await cluster.kill9(old); // also the one sentinel ioredis was given

      const afterKill = await retryThroughFailover(
        () => redlock.acquire(['compat:ioredis:b'], 30000));
      const leader = await connectedNode();
      assert.notEqual(leader, old);
      assert.equal(await client.get('compat:ioredis:b'), afterKill.value);
      await afterKill.release();
      assert.equal(await client.exists('compat:ioredis:b'), 0);
      const again = await redlock.acquire(['compat:ioredis:a'], 30000);
      await again.release();
    });
});
