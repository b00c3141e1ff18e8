'use strict';
// node-redis 4.7.1 (@redis/client 1.6.1), unmodified, against the server named by
// COMPAT_SERVER. On connect it pipelines CLIENT SETINFO LIB-VER / LIB-NAME (ignoring error
// replies, since Redis before 7.2 lacks SETINFO), then CLIENT SETNAME and AUTH when configured,
// and reports ready only once all of them are answered.

const assert = require('node:assert/strict');
const { createHash } = require('node:crypto');
const { after, before, describe, it } = require('node:test');
const { createClient } = require('redis');
const { ServerProcess, waitUntil } = require('./support/server_process');
const { requirePinnedVersions } = require('./support/pinned');

const TEST_TIMEOUT_MS = 30000;

// The unlock script of the Redis documentation, in its one-line and indented forms.
const UNLOCK_ONE_LINE = 'if redis.call("get",KEYS[1]) == ARGV[1] then return redis.call("del",KEYS[1]) else return 0 end';
const UNLOCK_INDENTED = `if redis.call("get",KEYS[1]) == ARGV[1] then
    return redis.call("del",KEYS[1])
else
    return 0
end`;

describe(`node-redis against ${process.env.COMPAT_SERVER || 'redis'}`, () => {
  let server;
  let authServer;
  const clients = [];

  async function connect(port, options = {}) {
    const client = createClient({
      socket: { host: '127.0.0.1', port, connectTimeout: 5000, reconnectStrategy: false },
      ...options,
    });
    client.on('error', () => {}); // surfaced by the failing call instead
    clients.push(client);
    await client.connect();
    return client;
  }

  before(async () => {
    requirePinnedVersions();
    server = await new ServerProcess().start();
    authServer = await new ServerProcess({ extraArgs: ['--requirepass', 'compat-secret'] }).start();
  });

  after(async () => {
    for (const client of clients) {
      if (client.isOpen) await client.disconnect();
    }
    if (server) await server.stop();
    if (authServer) await authServer.stop();
  });

  it('connect handshake completes and the client name is set', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = await connect(server.port, { name: 'compat-node-redis' });
      assert.equal(client.isReady, true);
      assert.equal(await client.ping(), 'PONG');
      assert.equal(await client.clientGetName(), 'compat-node-redis');
      const info = await client.clientInfo();
      assert.equal(info.name, 'compat-node-redis');
      assert.ok(info.id > 0);
    });

  it('connect handshake authenticates against requirepass', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = await connect(authServer.port, { password: 'compat-secret' });
      assert.equal(await client.set('compat:node-redis:auth', 'v'), 'OK');
      assert.equal(await client.get('compat:node-redis:auth'), 'v');

      const anonymous = await connect(authServer.port);
      await assert.rejects(anonymous.get('compat:node-redis:auth'),
        { message: 'NOAUTH Authentication required.' });
    });

  it('set and get', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(server.port);
    const key = 'compat:node-redis:string';
    await client.del(key);
    assert.equal(await client.get(key), null);
    assert.equal(await client.set(key, 'h\u00e9llo'), 'OK');
    assert.equal(await client.get(key), 'h\u00e9llo');
    assert.equal(await client.set(key, 'next', { GET: true }), 'h\u00e9llo');
    assert.equal(await client.del(key), 1);
  });

  it('SET NX PX takes once and expires', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(server.port);
    const key = 'compat:node-redis:nx';
    await client.del(key);
    assert.equal(await client.set(key, 'owner-a', { NX: true, PX: 10000 }), 'OK');
    assert.equal(await client.set(key, 'owner-b', { NX: true, PX: 10000 }), null);
    assert.equal(await client.get(key), 'owner-a');
    const pttl = await client.pTTL(key);
    assert.ok(pttl > 0 && pttl <= 10000, `pttl ${pttl}`);
    assert.equal(await client.set(key, 'owner-a', { XX: true, PX: 100 }), 'OK');
    assert.ok(await waitUntil(async () => (await client.exists(key)) === 0), 'never expired');
    assert.equal(await client.set(key, 'owner-b', { NX: true, PX: 10000 }), 'OK');
  });

  for (const [form, script] of [['one-line', UNLOCK_ONE_LINE], ['indented', UNLOCK_INDENTED]]) {
    it(`EVAL of the ${form} compare-and-delete script`, { timeout: TEST_TIMEOUT_MS },
      async () => {
        const client = await connect(server.port);
        const key = `compat:node-redis:unlock:${form}`;
        await client.set(key, 'token-1', { PX: 10000 });
        assert.equal(await client.eval(script, { keys: [key], arguments: ['token-2'] }), 0);
        assert.equal(await client.get(key), 'token-1');
        assert.equal(await client.eval(script, { keys: [key], arguments: ['token-1'] }), 1);
        assert.equal(await client.exists(key), 0);
        assert.equal(await client.eval(script, { keys: [key], arguments: ['token-1'] }), 0);
      });
  }

  it('SCRIPT LOAD then EVALSHA, and NOSCRIPT for an unknown SHA', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const client = await connect(server.port);
      const key = 'compat:node-redis:evalsha';
      const sha = await client.scriptLoad(UNLOCK_ONE_LINE);
      assert.equal(sha, createHash('sha1').update(UNLOCK_ONE_LINE).digest('hex'));
      await client.set(key, 'token');
      assert.equal(await client.evalSha(sha, { keys: [key], arguments: ['token'] }), 1);
      await assert.rejects(client.evalSha('f'.repeat(40), { keys: [key], arguments: [] }),
        { message: 'NOSCRIPT No matching script. Please use EVAL.' });
    });

  it('MULTI/EXEC and a pipeline of many commands', { timeout: TEST_TIMEOUT_MS }, async () => {
    const client = await connect(server.port);
    const key = 'compat:node-redis:multi';
    await client.del(key);
    const replies = await client.multi().set(key, '1').incr(key).get(key).exec();
    assert.deepEqual(replies, ['OK', 2, '2']);
    const many = await Promise.all(Array.from({ length: 200 }, () => client.incr(key)));
    assert.deepEqual(many, Array.from({ length: 200 }, (_, i) => i + 3));
  });
});
