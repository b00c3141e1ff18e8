'use strict';
// redlock 5.0.0-beta.2 over ioredis 5, unmodified, against the server named by COMPAT_SERVER.
// Redlock acquires, extends and releases with three Lua scripts sent by EVALSHA, falling back
// to EVAL on a NOSCRIPT reply. TTL behaviour needs real time here (no manual clock in a
// library), so the tests use short TTLs; every wait is bounded.

const assert = require('node:assert/strict');
const { after, before, describe, it } = require('node:test');
const { setTimeout: delay } = require('node:timers/promises');
const Redis = require('ioredis');
const RedlockModule = require('redlock');
const { ServerProcess, waitUntil } = require('./support/server_process');
const { requirePinnedVersions } = require('./support/pinned');

const Redlock = RedlockModule.default;
const { ExecutionError, ResourceLockedError } = RedlockModule;

const TEST_TIMEOUT_MS = 60000;

describe(`redlock + ioredis against ${process.env.COMPAT_SERVER || 'redis'}`, () => {
  let server;
  const clients = [];

  // An ioredis client that fails fast instead of retrying forever when the server misbehaves.
  function newClient() {
    const client = new Redis({
      host: '127.0.0.1',
      port: server.port,
      maxRetriesPerRequest: 1,
      connectTimeout: 5000,
      commandTimeout: 10000,
      retryStrategy: () => null,
    });
    client.on('error', () => {}); // surfaced by the failing command instead
    clients.push(client);
    return client;
  }

  // No retries: a refused acquire fails at once.
  function newRedlock(client, settings = {}) {
    return new Redlock([client], { retryCount: 0, ...settings });
  }

  before(async () => {
    requirePinnedVersions();
    server = await new ServerProcess().start();
  });

  after(async () => {
    for (const client of clients) client.disconnect();
    if (server) await server.stop();
  });

  it('acquire stores the lock value with the TTL and refuses a second holder',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const client = newClient();
      const key = 'compat:redlock:acquire';
      await client.del(key);
      const lock = await newRedlock(client).acquire([key], 5000);
      assert.equal(await client.get(key), lock.value);
      const pttl = await client.pttl(key);
      assert.ok(pttl > 0 && pttl <= 5000, `pttl ${pttl}`);
      assert.ok(lock.expiration > Date.now());

      const rival = newRedlock(newClient());
      await assert.rejects(rival.acquire([key], 5000), (error) => {
        assert.ok(error instanceof ExecutionError, error.stack);
        return true;
      });
      assert.equal(await client.get(key), lock.value);
      await lock.release();
    });

  it('a refused acquire reports the resource as locked, not as a server error',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const client = newClient();
      const key = 'compat:redlock:refused';
      await client.set(key, 'someone-else', 'PX', 5000);
      const errors = [];
      const redlock = newRedlock(client);
      redlock.on('error', (error) => errors.push(error));
      await assert.rejects(redlock.acquire([key], 1000), ExecutionError);
      assert.ok(errors.length >= 1);
      for (const error of errors) {
        assert.ok(error instanceof ResourceLockedError, `unexpected error: ${error.stack}`);
      }
      assert.equal(await client.get(key), 'someone-else');
    });

  it('extend renews the TTL and keeps the value', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = newClient();
    const key = 'compat:redlock:extend';
    await client.del(key);
    const lock = await newRedlock(client).acquire([key], 5000);
    const extended = await lock.extend(20000);
    assert.equal(extended.value, lock.value);
    assert.equal(await client.get(key), lock.value);
    const pttl = await client.pttl(key);
    assert.ok(pttl > 19000 && pttl <= 20000, `pttl ${pttl}`);
    assert.ok(extended.expiration > Date.now() + 19000);
    await extended.release();
  });

  it('release deletes the key and a new holder can acquire', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const key = 'compat:redlock:release';
      await client.del(key);
      const redlock = newRedlock(client);
      const lock = await redlock.acquire([key], 5000);
      await lock.release();
      assert.equal(await client.exists(key), 0);
      const next = await redlock.acquire([key], 5000);
      assert.equal(await client.get(key), next.value);
      await next.release();
    });

  it('release after expiry fails and leaves the next holder alone', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const key = 'compat:redlock:expired';
      await client.del(key);
      const redlock = newRedlock(client);
      const first = await redlock.acquire([key], 200);
      assert.ok(await waitUntil(async () => (await client.exists(key)) === 0), 'never expired');
      const second = await redlock.acquire([key], 5000);
      await assert.rejects(first.release(), ExecutionError);
      assert.equal(await client.get(key), second.value);
      await second.release();
    });

  it('multi-resource acquire is all or nothing', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = newClient();
    const keys = ['compat:redlock:multi:a', 'compat:redlock:multi:b', 'compat:redlock:multi:c'];
    await client.del(...keys);
    await client.set(keys[2], 'taken', 'PX', 5000);
    const redlock = newRedlock(client);
    await assert.rejects(redlock.acquire(keys, 5000), ExecutionError);
    assert.equal(await client.exists(keys[0], keys[1]), 0);
    await client.del(keys[2]);
    const lock = await redlock.acquire(keys, 5000);
    assert.deepEqual(await client.mget(...keys), [lock.value, lock.value, lock.value]);
    await lock.release();
    assert.equal(await client.exists(...keys), 0);
  });

  it('falls back to EVAL after SCRIPT FLUSH, which caches the script for EVALSHA',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const client = newClient();
      const key = 'compat:redlock:noscript';
      await client.del(key);
      assert.equal(await client.script('FLUSH'), 'OK');
      const redlock = newRedlock(client);
      const lock = await redlock.acquire([key], 5000);
      assert.equal(await client.get(key), lock.value);
      const acquireSha = redlock.scripts.acquireScript.hash;
      assert.deepEqual(await client.script('EXISTS', acquireSha), [1]);
      await lock.release();
      assert.equal(await client.exists(key), 0);
    });

  it('using() extends the lock automatically across several TTLs', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const key = 'compat:redlock:using';
      await client.del(key);
      const duration = 1000; // renewed 500 ms before expiry: about every 500 ms
      const redlock = newRedlock(client, { automaticExtensionThreshold: 500 });
      const rival = newRedlock(newClient());
      const started = Date.now();
      let held = null;
      let ttlRenewals = 0;
      await redlock.using([key], duration, async (signal) => {
        held = await client.get(key);
        assert.ok(held);
        let lastPttl = await client.pttl(key);
        // Four TTLs: without renewal the key would have expired long before.
        while (Date.now() - started < 4 * duration) {
          await delay(50);
          assert.equal(signal.aborted, false, `aborted: ${signal.error}`);
          assert.equal(await client.get(key), held);
          const pttl = await client.pttl(key);
          assert.ok(pttl > 0 && pttl <= duration, `pttl ${pttl}`);
          if (pttl > lastPttl + 100) ttlRenewals += 1;
          lastPttl = pttl;
        }
        await assert.rejects(rival.acquire([key], duration), ExecutionError);
      });
      assert.ok(ttlRenewals >= 3, `renewals seen: ${ttlRenewals}`);
      assert.equal(await client.exists(key), 0);
    });

  it('using() aborts the routine when the lock is lost', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = newClient();
      const key = 'compat:redlock:using-lost';
      await client.del(key);
      const duration = 600;
      const redlock = newRedlock(client, { automaticExtensionThreshold: 200 });
      let aborted = false;
      await redlock.using([key], duration, async (signal) => {
        await client.set(key, 'stolen', 'PX', 10000); // the extend script now refuses
        const deadline = Date.now() + 5000;
        while (!signal.aborted && Date.now() < deadline) await delay(20);
        aborted = signal.aborted;
        assert.ok(signal.error instanceof ExecutionError, `${signal.error}`);
      }).catch(() => {}); // the final release fails too: the key is not ours
      assert.equal(aborted, true);
      assert.equal(await client.get(key), 'stolen');
      await client.del(key);
    });

  it('two competing Redlock instances never hold the lock at the same time',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const key = 'compat:redlock:contended';
      const counter = 'compat:redlock:counter';
      const probe = newClient();
      await probe.del(key, counter);
      const rounds = 25;
      let holders = 0;
      let maxHolders = 0;
      const acquisitions = [0, 0];
      async function compete(index) {
        const redlock = new Redlock([newClient()],
          { retryCount: 500, retryDelay: 10, retryJitter: 5 });
        for (let round = 0; round < rounds; round += 1) {
          const lock = await redlock.acquire([key], 5000);
          holders += 1;
          maxHolders = Math.max(maxHolders, holders);
          acquisitions[index] += 1;
          const value = Number(await probe.get(counter) || 0);
          await delay(2); // widen the window a second holder would need
          await probe.set(counter, `${value + 1}`);
          holders -= 1;
          await lock.release();
        }
      }
      await Promise.all([compete(0), compete(1)]);
      assert.equal(maxHolders, 1);
      assert.deepEqual(acquisitions, [rounds, rounds]);
      assert.equal(await probe.get(counter), `${2 * rounds}`);
      assert.equal(await probe.exists(key), 0);
    });
});

describe(`redlock quorum over three ${process.env.COMPAT_SERVER || 'redis'} servers`, () => {
  const servers = [];
  const clients = [];

  before(async () => {
    requirePinnedVersions();
    for (let i = 0; i < 3; i += 1) servers.push(await new ServerProcess().start());
    for (const server of servers) {
      const client = new Redis({
        host: '127.0.0.1',
        port: server.port,
        maxRetriesPerRequest: 0,
        connectTimeout: 2000,
        commandTimeout: 5000,
        retryStrategy: () => null,
        enableOfflineQueue: false,
      });
      client.on('error', () => {});
      await new Promise((resolve, reject) => {
        client.once('ready', resolve);
        client.once('end', () => reject(new Error(`no connection to ${server.port}`)));
      });
      clients.push(client);
    }
  });

  after(async () => {
    for (const client of clients) client.disconnect();
    for (const server of servers) await server.stop();
  });

  it('acquires with a quorum of two of three servers and fails below it',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const key = 'compat:redlock:quorum';
      const redlock = new Redlock(clients, { retryCount: 0 });
      const lock = await redlock.acquire([key], 10000);
      // acquire() resolves at the quorum; the attempt's stats once every server has answered.
      const stats = await lock.attempts[0];
      assert.equal(stats.votesFor.size, 3);
      for (const client of clients) assert.equal(await client.get(key), lock.value);

      // Another owner on one server leaves a quorum of two; on two servers it leaves none,
      // and the failed acquire releases what it took on the third.
      const contested = 'compat:redlock:quorum-contested';
      await clients[0].set(contested, 'other', 'PX', 10000);
      const majority = await redlock.acquire([contested], 5000);
      assert.equal((await majority.attempts[0]).votesFor.size, 2);
      assert.equal(await clients[1].get(contested), majority.value);
      assert.equal(await clients[2].get(contested), majority.value);
      await majority.release(); // a quorum of deletes is a success
      assert.equal(await clients[0].get(contested), 'other');
      assert.equal(await clients[1].exists(contested), 0);
      await clients[1].set(contested, 'other', 'PX', 10000);
      await assert.rejects(redlock.acquire([contested], 5000), ExecutionError);
      assert.equal(await clients[2].exists(contested), 0);
      await clients[0].del(contested);
      await clients[1].del(contested);

      await servers[2].stop(); // two of three are left: still a quorum
      const extended = await lock.extend(20000);
      for (const client of clients.slice(0, 2)) {
        const pttl = await client.pttl(key);
        assert.ok(pttl > 19000 && pttl <= 20000, `pttl ${pttl}`);
      }
      await extended.release();
      for (const client of clients.slice(0, 2)) assert.equal(await client.exists(key), 0);

      await servers[1].stop(); // one of three: no quorum
      await assert.rejects(redlock.acquire([key], 5000), ExecutionError);
      assert.equal(await clients[0].exists(key), 0); // the failed acquire released its part
    });
});
