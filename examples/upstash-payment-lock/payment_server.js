'use strict';
// The seed article's payment handler as a small runnable service, with @upstash/lock taking
// the lock: POST /payments {"paymentId": "..."} processes the payment under the lock
// `payment:<id>` and answers 409 while another request holds it, so a double submission is
// refused instead of charged twice. It talks to any Upstash-compatible REST endpoint; with
// latchd that is its rest-port:
//
//   latchd --rest-port 8079 --rest-token secret &
//   UPSTASH_REDIS_REST_URL=http://127.0.0.1:8079 UPSTASH_REDIS_REST_TOKEN=secret \
//     PORT=3000 node payment_server.js
//   curl -X POST localhost:3000/payments -d '{"paymentId":"p-1"}'
//
// PROCESS_MS (default 200) stands in for the payment provider's call.

const http = require('node:http');
const { Redis } = require('@upstash/redis');
const { Lock } = require('@upstash/lock');

function json(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => { body += chunk; });
    req.on('end', () => {
      try { resolve(JSON.parse(body)); } catch (error) { reject(error); }
    });
    req.on('error', reject);
  });
}

// processPayment(paymentId) runs while the lock is held; `ledger` counts charges per id so a
// caller (the test) can check that no payment was processed twice at the same time.
function createPaymentServer({ redis, processMs = 200, ledger = new Map() }) {
  async function processPayment(paymentId) {
    const active = (ledger.get(paymentId)?.active ?? 0) + 1;
    const entry = { active, charges: (ledger.get(paymentId)?.charges ?? 0) + 1,
      maxActive: Math.max(active, ledger.get(paymentId)?.maxActive ?? 0) };
    ledger.set(paymentId, entry);
    await new Promise((resolve) => setTimeout(resolve, processMs));
    entry.active -= 1;
  }

  return http.createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/payments') return json(res, 404, { error: 'Not found' });
    let paymentId;
    try {
      ({ paymentId } = await readJson(req));
    } catch {
      return json(res, 400, { error: 'Bad request' });
    }
    if (typeof paymentId !== 'string' || paymentId === '') return json(res, 400, { error: 'paymentId required' });
    const lock = new Lock({ id: `payment:${paymentId}`, lease: 15000, redis, retry: { attempts: 1, delay: 0 } });
    try {
      if (!(await lock.acquire())) {
        return json(res, 409, { error: 'Conflict', message: 'This payment is already being processed.' });
      }
    } catch (error) {
      return json(res, 503, { error: 'Lock service unavailable', message: String(error.message) });
    }
    try {
      await processPayment(paymentId);
      return json(res, 200, { success: true });
    } finally {
      await lock.release();
    }
  });
}

if (require.main === module) {
  const redis = new Redis({ url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN });
  const server = createPaymentServer({ redis, processMs: Number(process.env.PROCESS_MS || 200) });
  server.listen(Number(process.env.PORT || 3000), '127.0.0.1', () => {
    console.log(`payments on http://127.0.0.1:${server.address().port}/payments`);
  });
}

module.exports = { createPaymentServer };
