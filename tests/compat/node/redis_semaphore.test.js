'use strict';
// redis-semaphore 5.8.0 over ioredis 5, unmodified, against the server named by COMPAT_SERVER:
// Mutex (a string key with SET NX PX and compare-and-delete scripts), Semaphore and
// MultiSemaphore (a sorted set of holders scored by acquire time: ZREMRANGEBYSCORE, ZCARD,
// ZADD, PEXPIRE in one script; ZSCORE in the refresh script; ZREM to release). Real time,
// short TTLs, every wait bounded.

const assert = require('node:assert/strict');
const { after, before, describe, it } = require('node:test');
const { setTimeout: delay } = require('node:timers/promises');
const Redis = require('ioredis');
const { Mutex, Semaphore, MultiSemaphore } = require('redis-semaphore');
const { ServerProcess, waitUntil } = require('./support/server_process');
const { requirePinnedVersions } = require('./support/pinned');

const TEST_TIMEOUT_MS = 60000;
// Fail fast: one attempt, no background refresh unless a test asks for it.
const ONCE = { acquireAttemptsLimit: 1, refreshInterval: 0, lockTimeout: 10000 };

describe(`redis-semaphore + ioredis against ${process.env.COMPAT_SERVER || 'redis'}`, () => {
  let server;
  const clients = [];

  function newClient() {
    const client = new Redis({
      host: '127.0.0.1',
      port: server.port,
      maxRetriesPerRequest: 1,
      connectTimeout: 5000,
      commandTimeout: 10000,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    clients.push(client);
    return client;
  }

  before(async () => {
    requirePinnedVersions();
    server = await new ServerProcess().start();
  });

  after(async () => {
    for (const client of clients) client.disconnect();
    if (server) await server.stop();
  });

  it('Mutex: one holder at a time, released to the next', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const a = new Mutex(client, 'compat-m', ONCE);
      const b = new Mutex(newClient(), 'compat-m', ONCE);
      assert.equal(await a.tryAcquire(), true);
      assert.equal(await client.get('mutex:compat-m'), a.identifier);
      const pttl = await client.pttl('mutex:compat-m');
      assert.ok(pttl > 0 && pttl <= 10000, `pttl ${pttl}`);
      assert.equal(await b.tryAcquire(), false);
      await a.release();
      assert.equal(await client.exists('mutex:compat-m'), 0);
      assert.equal(await b.tryAcquire(), true);
      await b.release();
    });

  it('Mutex: the refresh keeps an expiring lock alive', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const m = new Mutex(client, 'compat-refresh', { lockTimeout: 400, refreshInterval: 100 });
      await m.acquire();
      await delay(900);
      assert.equal(await client.get('mutex:compat-refresh'), m.identifier);
      await m.release();
      assert.equal(await client.exists('mutex:compat-refresh'), 0);
    });

  it('Semaphore: limit holders, then refusals, then a freed seat', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const s1 = new Semaphore(client, 'compat-s', 2, ONCE);
      const s2 = new Semaphore(newClient(), 'compat-s', 2, ONCE);
      const s3 = new Semaphore(newClient(), 'compat-s', 2, ONCE);
      assert.equal(await s1.tryAcquire(), true);
      assert.equal(await s2.tryAcquire(), true);
      assert.equal(await s3.tryAcquire(), false);
      assert.equal(await client.type('semaphore:compat-s'), 'zset');
      assert.equal(await client.zcard('semaphore:compat-s'), 2);
      const holders = await client.zrange('semaphore:compat-s', 0, -1);
      assert.deepEqual(holders.sort(), [s1.identifier, s2.identifier].sort());
      await s1.release();
      assert.equal(await client.zcard('semaphore:compat-s'), 1);
      assert.equal(await s3.tryAcquire(), true);
      await s2.release();
      await s3.release();
      assert.equal(await client.exists('semaphore:compat-s'), 0);
    });

  it('Semaphore: a holder past its lockTimeout loses its seat', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const stale = new Semaphore(client, 'compat-stale', 1, { ...ONCE, lockTimeout: 300 });
      const next = new Semaphore(newClient(), 'compat-stale', 1, { ...ONCE, lockTimeout: 300 });
      const staleFrom = Date.now();
      assert.equal(await stale.tryAcquire(), true);
      assert.equal(await next.tryAcquire(), false);
      // The seat is given up by the clients' clocks (the scripts take Date.now()): retried
      // until it is, and not before lockTimeout.
      assert.ok(await waitUntil(() => next.tryAcquire()), 'the stale seat was never freed');
      assert.ok(Date.now() - staleFrom >= 300, `freed after ${Date.now() - staleFrom} ms`);
      assert.deepEqual(await client.zrange('semaphore:compat-stale', 0, -1), [next.identifier]);
      await next.release();
    });

  it('Semaphore: acquire waits for a seat and the refresh script keeps one',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const client = newClient();
      const holder = new Semaphore(client, 'compat-wait', 1,
        { lockTimeout: 400, refreshInterval: 100 });
      await holder.acquire();
      const waiter = new Semaphore(newClient(), 'compat-wait', 1,
        { lockTimeout: 400, refreshInterval: 0, acquireTimeout: 5000, retryInterval: 20 });
      const waiting = waiter.acquire();
      await delay(700);  // the holder's refreshes keep its seat past lockTimeout
      assert.equal(waiter.isAcquired, false);
      await holder.release();
      await waiting;
      assert.equal(waiter.isAcquired, true);
      await waiter.release();
    });

  it('MultiSemaphore: permits counted as members', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = newClient();
    const big = new MultiSemaphore(client, 'compat-ms', 3, 2, ONCE);
    const two = new MultiSemaphore(newClient(), 'compat-ms', 3, 2, ONCE);
    const one = new MultiSemaphore(newClient(), 'compat-ms', 3, 1, ONCE);
    assert.equal(await big.tryAcquire(), true);
    assert.equal(await client.zcard('semaphore:compat-ms'), 2);
    assert.equal(await two.tryAcquire(), false);
    assert.equal(await one.tryAcquire(), true);
    assert.equal(await client.zcard('semaphore:compat-ms'), 3);
    await big.release();
    assert.equal(await client.zcard('semaphore:compat-ms'), 1);
    assert.equal(await two.tryAcquire(), true);
    await two.release();
    await one.release();
    assert.equal(await client.exists('semaphore:compat-ms'), 0);
  });

  it('contention: N workers on a Semaphore of 3 never exceed 3 holders',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      let inside = 0;
      let most = 0;
      const worker = async () => {
        const s = new Semaphore(newClient(), 'compat-contend', 3,
          { lockTimeout: 5000, refreshInterval: 0, acquireTimeout: 20000, retryInterval: 5 });
        for (let i = 0; i < 5; ++i) {
          await s.acquire();
          inside += 1;
          most = Math.max(most, inside);
          await delay(5);
          inside -= 1;
          await s.release();
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      assert.ok(most <= 3 && most >= 1, `most ${most}`);
    });
});
