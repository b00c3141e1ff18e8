'use strict';
// simple-redis-mutex 2.1.0 over node-redis 4.7.1, unmodified, against the server named by
// COMPAT_SERVER. The library takes a lock with SET NX PX, releases it with a Lua script
// that DELs the key and PUBLISHes the release on one channel, and wakes its waiters from a
// dedicated subscriber connection (SUBSCRIBE). The waits here poll only once a minute, so a
// waiter that gets the lock within seconds was woken by the published message.

const assert = require('node:assert/strict');
const { after, before, describe, it } = require('node:test');
const { setTimeout: delay } = require('node:timers/promises');
const { createClient } = require('redis');
const { lock, tryLock } = require('simple-redis-mutex');
const { ServerProcess, waitUntil } = require('./support/server_process');
const { requirePinnedVersions } = require('./support/pinned');

const TEST_TIMEOUT_MS = 30000;
const NO_POLLING = { pollingInterval: 60000 };

describe(`simple-redis-mutex against ${process.env.COMPAT_SERVER || 'redis'}`, () => {
  let server;
  let client;

  before(async () => {
    requirePinnedVersions();
    server = await new ServerProcess().start();
    client = createClient({
      socket: { host: '127.0.0.1', port: server.port, connectTimeout: 5000, reconnectStrategy: false },
    });
    client.on('error', () => {}); // surfaced by the failing call instead
    await client.connect();
  });

  after(async () => {
    // The library's subscriber follows the client's 'end' event and quits with it.
    if (client && client.isOpen) await client.quit();
    await delay(100);
    if (server) await server.stop();
  });

  it('tryLock takes a free lock, refuses a held one, and release frees it',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const [got, release] = await tryLock(client, 'try', { timeout: 10000 });
      assert.equal(got, true);
      assert.ok(release.fencingToken > 0);
      const [again] = await tryLock(client, 'try', { timeout: 10000 });
      assert.equal(again, false);
      const pttl = await client.pTTL('@simple-redis-mutex:lock-try');
      assert.ok(pttl > 0 && pttl <= 10000, `pttl ${pttl}`);
      await release();
      assert.equal(await client.exists('@simple-redis-mutex:lock-try'), 0);
      const [third, release3] = await tryLock(client, 'try', { timeout: 10000 });
      assert.equal(third, true);
      assert.ok(release3.fencingToken > release.fencingToken);
      await release3();
    });

  it('a release by a stale holder leaves the new holder alone', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const [got, stale] = await tryLock(client, 'stale', { timeout: 100 });
      assert.equal(got, true);
      assert.ok(await waitUntil(
        async () => (await client.exists('@simple-redis-mutex:lock-stale')) === 0), 'never expired');
      const [got2, current] = await tryLock(client, 'stale', { timeout: 10000 });
      assert.equal(got2, true);
      await stale();
      assert.equal(await client.exists('@simple-redis-mutex:lock-stale'), 1);
      await current();
    });

  it('waiters are woken by the published release, one holder at a time',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const holder = await lock(client, 'queue', { timeout: 20000, ...NO_POLLING });
      const order = [];
      let inside = 0;
      const waiter = async (id) => {
        const release = await lock(client, 'queue', { timeout: 20000, ...NO_POLLING });
        inside += 1;
        assert.equal(inside, 1, 'two holders at once');
        order.push(id);
        await delay(20);
        inside -= 1;
        await release();
      };
      const started = Date.now();
      const waiters = [waiter(1), waiter(2), waiter(3)];
      await delay(200);
      assert.deepEqual(order, [], 'nobody may hold the lock before its release');
      await holder();
      await Promise.all(waiters);
      assert.equal(order.length, 3);
      // Polling would take a minute: only the pub/sub message can wake them this fast.
      assert.ok(Date.now() - started < 10000, `took ${Date.now() - started} ms`);
    });

  it('failAfter gives up on a lock that is never released', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const [got, release] = await tryLock(client, 'never', { timeout: 10000 });
      assert.equal(got, true);
      await assert.rejects(lock(client, 'never', { failAfter: 300, ...NO_POLLING }),
        /could not be acquired after 300 millis/);
      await release();
    });
});
