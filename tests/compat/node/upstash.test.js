'use strict';
// @upstash/redis 1.39.0 and @upstash/lock 0.2.1, unmodified, against latchd's REST endpoint
// (rest-port), which speaks Upstash's REST protocol over HTTP/1.1. Redis has no such endpoint,
// so this suite runs against latchd only; the answers are compared with RESP's in
// tests/wire/rest_resp_compare_test.cpp.
//
// Covered: the seed article's lock code and payment handler, compiled from its TypeScript
// unchanged (examples/upstash-payment-lock/article_lock.ts); @upstash/lock's flow (acquire
// with retry, refused while held, extend, release only by the owner, status); many concurrent
// "functions" on one key with exactly one holder at a time; the article's handler as a service
// on @upstash/lock (examples/upstash-payment-lock/payment_server.js) answering 409; pipelines
// and transactions; auth failures; base64 and plain response encodings.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { after, before, describe, it } = require('node:test');
const { setTimeout: delay } = require('node:timers/promises');
const ts = require('typescript');
const { Redis, errors } = require('@upstash/redis');
const { Lock } = require('@upstash/lock');
const { ServerProcess, freePort, waitUntil } = require('./support/server_process');
const { requirePinnedVersions } = require('./support/pinned');

const EXAMPLE_DIR = path.join(__dirname, '..', '..', '..', 'examples', 'upstash-payment-lock');
const { createPaymentServer } = require(path.join(EXAMPLE_DIR, 'payment_server.js'));
const TOKEN = 'compat-rest-token';
const TEST_TIMEOUT_MS = 60000;

// A Next.js-like NextResponse.json, which the article uses without importing it.
const NextResponse = {
  json: (body, init = {}) => new Response(JSON.stringify(body), {
    status: init.status ?? 200, headers: { 'content-type': 'application/json' },
  }),
};

// Compiles the article's TypeScript as written and evaluates it as a CommonJS module, with
// UPSTASH_REDIS_REST_URL/TOKEN pointing at latchd (the module reads them when it loads).
function loadArticle(url, token) {
  const source = fs.readFileSync(path.join(EXAMPLE_DIR, 'article_lock.ts'), 'utf8');
  const { outputText, diagnostics } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020 },
    reportDiagnostics: true,
  });
  assert.deepEqual(diagnostics, []);
  const env = { ...process.env, UPSTASH_REDIS_REST_URL: url, UPSTASH_REDIS_REST_TOKEN: token };
  const module = { exports: {} };
  // eslint-disable-next-line no-new-func
  new Function('require', 'module', 'exports', 'process', 'NextResponse', outputText)(
    require, module, module.exports, { ...process, env }, NextResponse);
  return module.exports;
}

describe('@upstash/redis and @upstash/lock against latchd REST', () => {
  let server;
  let url;

  // A client as a serverless function would create it; telemetry off to keep logs quiet.
  function client(options = {}) {
    return new Redis({ url, token: TOKEN, enableTelemetry: false, ...options });
  }

  before(async () => {
    requirePinnedVersions();
    const restPort = await freePort();
    server = await new ServerProcess({
      kind: 'latchd', extraArgs: ['--rest-port', `${restPort}`, '--rest-token', TOKEN],
    }).start();
    url = `http://127.0.0.1:${restPort}`;
  });

  after(async () => {
    if (server) await server.stop();
  });

  it('runs the seed article\'s DistributedLock and payment handler unchanged',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const { DistributedLock, POST } = loadArticle(url, TOKEN);
      const first = new DistributedLock('payment:p-1', 15);
      const second = new DistributedLock('payment:p-1', 15);
      assert.equal(await first.acquire(), true);
      assert.equal(await second.acquire(), false, 'held by first');
      const ttl = await client().ttl('lock:dist:payment:p-1');
      assert.ok(ttl > 0 && ttl <= 15, `ttl ${ttl}`);
      // The handler answers 409 while the payment's lock is held...
      const request = () => new Request('http://app/api/pay', {
        method: 'POST', body: JSON.stringify({ paymentId: 'p-1' }),
      });
      const conflict = await POST(request());
      assert.equal(conflict.status, 409);
      assert.equal((await conflict.json()).error, 'Conflict');
      assert.equal(await second.release(), false, 'only the owner releases');
      assert.equal(await first.release(), true);
      // ...and processes it (taking and releasing the lock) once it is free.
      const ok = await POST(request());
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { success: true });
      assert.equal(await client().exists('lock:dist:payment:p-1'), 0, 'released by the handler');
    });

  it('@upstash/lock: acquire with retry, refused while held, extend, owner-only release, status',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const redis = client();
      const a = new Lock({ id: 'lock:flow', lease: 2000, redis });
      const b = new Lock({ id: 'lock:flow', lease: 2000, redis, retry: { attempts: 3, delay: 50 } });
      assert.equal(await b.getStatus(), 'FREE');
      assert.equal(await a.acquire(), true);
      assert.equal(await a.getStatus(), 'ACQUIRED');
      assert.equal(await b.acquire(), false, 'refused after 3 attempts while held');
      assert.equal(await b.release(), false, 'never acquired: not released');
      assert.equal(await redis.exists('lock:flow'), 1);
      const before = await redis.pttl('lock:flow');
      assert.equal(await a.extend(3000), true);
      const extended = await redis.pttl('lock:flow');
      assert.ok(extended > before + 2000, `pttl ${before} -> ${extended}`);
      // b retries while a still holds the lock and gets it once a releases.
      const waiting = b.acquire({ retry: { attempts: 100, delay: 20 } });
      await delay(100);
      assert.equal(await a.release(), true);
      assert.equal(await waiting, true);
      assert.equal(await a.getStatus(), 'FREE');
      assert.equal(await b.getStatus(), 'ACQUIRED');
      assert.equal(await a.release(), false, 'a no longer owns it');
      assert.equal(await b.release(), true);
    });

  it('@upstash/lock: a lease that runs out frees the lock', { timeout: TEST_TIMEOUT_MS },
    async () => {
      const redis = client();
      const a = new Lock({ id: 'lock:lease', lease: 1500, redis });
      const b = new Lock({ id: 'lock:lease', lease: 1500, redis, retry: { attempts: 1, delay: 0 } });
      assert.equal(await a.acquire(), true);
      assert.equal(await b.acquire(), false);
      assert.ok(await waitUntil(async () => (await redis.exists('lock:lease')) === 0),
        'the lease never ran out');
      assert.equal(await b.acquire(), true);
      assert.equal(await a.getStatus(), 'FREE');
      assert.equal(await b.release(), true);
    });

  it('many concurrent functions on one key: exactly one holder at a time',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const FUNCTIONS = 24;
      let holders = 0;
      let maxHolders = 0;
      let done = 0;
      await Promise.all(Array.from({ length: FUNCTIONS }, async () => {
        // Each function has its own client, as separate serverless instances would.
        const lock = new Lock({ id: 'lock:contended', lease: 5000, redis: client(),
          retry: { attempts: 2000, delay: 5 } });
        assert.equal(await lock.acquire(), true);
        holders += 1;
        maxHolders = Math.max(maxHolders, holders);
        await delay(10);
        holders -= 1;
        assert.equal(await lock.release(), true);
        done += 1;
      }));
      assert.equal(done, FUNCTIONS);
      assert.equal(maxHolders, 1);
    });

  it('the payment service on @upstash/lock answers 409 to a double submission',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const ledger = new Map();
      const service = createPaymentServer({ redis: client(), processMs: 1000, ledger });
      await new Promise((resolve) => service.listen(0, '127.0.0.1', resolve));
      const pay = (paymentId) => fetch(`http://127.0.0.1:${service.address().port}/payments`, {
        method: 'POST', body: JSON.stringify({ paymentId }),
      }).then((res) => res.status);
      try {
        // The first submission takes the lock; every repeat while it is processed gets 409.
        const first = pay('p-double');
        for (let i = 0; i < 200 && !ledger.get('p-double')?.active; i += 1) await delay(10);
        assert.equal(ledger.get('p-double')?.active, 1, 'the first payment is being processed');
        const repeats = await Promise.all(Array.from({ length: 9 }, () => pay('p-double')));
        assert.deepEqual(repeats, Array(9).fill(409));
        assert.equal(await first, 200);
        // Other payments are independent, and the same one is accepted again once done.
        assert.deepEqual(await Promise.all(['p-a', 'p-b', 'p-c'].map(pay)), [200, 200, 200]);
        assert.equal(await pay('p-double'), 200, 'free again once processed');
        assert.equal(ledger.get('p-double').charges, 2);
        assert.equal(ledger.get('p-double').maxActive, 1);
      } finally {
        await new Promise((resolve) => service.close(resolve));
      }
    });

  // Auto-pipelining (the default) batches commands through POST /pipeline; without it each
  // command is a POST / of its own.
  for (const enableAutoPipelining of [true, false]) {
    it(`@upstash/redis commands, pipelines and transactions (auto-pipelining ${enableAutoPipelining})`,
      { timeout: TEST_TIMEOUT_MS }, async () => {
        const redis = client({ enableAutoPipelining });
        const p = `ap${enableAutoPipelining}:`;
        assert.equal(await redis.set(`${p}user`, { name: 'Ada', tags: ['x'] }), 'OK');
        assert.deepEqual(await redis.get(`${p}user`), { name: 'Ada', tags: ['x'] });
        assert.equal(await redis.set(`${p}n`, 41, { ex: 100 }), 'OK');
        assert.equal(await redis.incr(`${p}n`), 42);
        assert.equal(await redis.set(`${p}n`, 1, { nx: true }), null);
        assert.deepEqual(await redis.mget(`${p}n`, `${p}missing`), [42, null]);
        assert.equal(await redis.eval('return ARGV[1] .. KEYS[1]', ['k'], ['v']), 'vk');
        await assert.rejects(redis.incr(`${p}user`), (e) => e instanceof errors.UpstashError &&
          e.message.includes('ERR value is not an integer or out of range'));
        const results = await redis.pipeline().set(`${p}p`, 1).incr(`${p}p`).get(`${p}p`).exec();
        assert.deepEqual(results, ['OK', 2, 2]);
        const kept = await redis.pipeline().incr(`${p}user`).incr(`${p}p`).exec({ keepErrors: true });
        assert.equal(kept[0].error, 'ERR value is not an integer or out of range');
        assert.equal(kept[1].result, 3);
        assert.deepEqual(
          await redis.multi().set(`${p}t`, 5).incrby(`${p}t`, 3).get(`${p}t`).exec(),
          ['OK', 8, 8]);
        await assert.rejects(redis.multi().set(`${p}t`, 'x').lpush(`${p}t`, 'a').exec(),
          /EXECABORT|unknown command/);
        assert.equal(await redis.get(`${p}t`), 8, 'a refused transaction changed nothing');
        assert.ok(redis.readYourWritesSyncToken, 'the server sends upstash-sync-token');
      });
  }

  it('auth failures are 401s with Upstash\'s message', { timeout: TEST_TIMEOUT_MS }, async () => {
    for (const token of ['wrong-token', '']) {
      const redis = new Redis({ url, token, enableTelemetry: false });
      await assert.rejects(redis.get('k'), (e) => e instanceof errors.UpstashError &&
        e.message.startsWith('WRONGPASS invalid or missing auth token'));
    }
    const lock = new Lock({ id: 'lock:auth', redis: new Redis({ url, token: 'nope', enableTelemetry: false }) });
    await assert.rejects(lock.acquire(), /WRONGPASS/);
  });

  it('base64 (the default) and plain encodings carry the same values',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const base64 = client();
      const plain = client({ responseEncoding: false });
      const values = ['héllo wörld ✓ 😀', 'OK', 'with "quotes" and \\ and \n', '   ', '{"a":1}'];
      for (const [i, value] of values.entries()) {
        assert.equal(await plain.set(`enc:${i}`, value), 'OK');
        assert.deepEqual(await base64.get(`enc:${i}`), await plain.get(`enc:${i}`));
      }
      assert.equal(await base64.get('enc:0'), values[0]);
      assert.equal(await base64.get('enc:1'), 'OK');
      assert.equal(await base64.ping(), 'PONG');
      assert.deepEqual(await base64.mget('enc:0', 'enc:3'), [values[0], values[3]]);
      // The raw bytes differ: base64 on the wire unless asked for plain JSON.
      const res = await fetch(`${url}/get/enc:0`, { headers: { authorization: `Bearer ${TOKEN}`, 'Upstash-Encoding': 'base64' } });
      assert.equal((await res.json()).result, Buffer.from(values[0]).toString('base64'));
    });
});
