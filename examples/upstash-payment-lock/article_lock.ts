// The lock code of the seed article (../../../shared/seeds/000_*.txt, "a distributed lock for
// serverless microservices with Upstash Redis"), exactly as published: a SET NX EX lock and a
// Lua compare-and-delete release through @upstash/redis, and the Next.js payment handler that
// answers 409 while a payment with the same id is in progress. Only this header and the
// comment marker before the article's "usage example" heading were added.
//
// It runs unchanged against latchd's REST endpoint: tests/compat/node/upstash.test.js
// compiles it with TypeScript and calls POST() with UPSTASH_REDIS_REST_URL pointing at
// latchd (NextResponse, which the article uses without importing, is supplied there).

import { Redis } from "@upstash/redis";

const redis = new Redis({
  url: process.env.UPSTASH_REDIS_REST_URL!,
  token: process.env.UPSTASH_REDIS_REST_TOKEN!,
});

export class DistributedLock {
  private lockKey: string;
  private lockValue: string;
  private ttlSeconds: number;

  constructor(resourceName: string, ttlSeconds = 10) {
    this.lockKey = `lock:dist:${resourceName}`;
    // ランダムな値で自分自身のロックであることを証明する (デッドロック・誤解放防止)
    this.lockValue = Math.random().toString(36).substring(2) + Date.now().toString(36);
    this.ttlSeconds = ttlSeconds;
  }

  // ロックの取得を試みる
  async acquire(): Promise<boolean> {
    // NX: キーが存在しない時のみセット, EX: 指定秒数後に自動消滅
    const result = await redis.set(this.lockKey, this.lockValue, {
      nx: true,
      ex: this.ttlSeconds,
    });
    return result !== null;
  }

  // ロックを安全に解除する（自分が取得したロックのみを削除）
  async release(): Promise<boolean> {
    // Luaスクリプトを使用してアトミックに「値の確認と削除」を実行する
    const luaScript = `
      if redis.call("get", KEYS[1]) == ARGV[1] then
        return redis.call("del", KEYS[1])
      else
        return 0
      end
    `;

    const result = await redis.eval(luaScript, [this.lockKey], [this.lockValue]);
    return result === 1;
  }
}

// 使用例：二重決済を防止するチェックフロー

export async function POST(req: Request) {
  const { paymentId } = await req.json();
  
  const lock = new DistributedLock(`payment:${paymentId}`, 15); // 15秒間ロック
  const isAcquired = await lock.acquire();

  if (!isAcquired) {
    return NextResponse.json({
      error: "Conflict",
      message: "ただいま決済処理中です。二重送信を防ぐためしばらくお待ちください。",
    }, { status: 409 });
  }

  try {
    // 決済処理の実行...
    return NextResponse.json({ success: true });
  } finally {
    // 確実にロックを解放する
    await lock.release();
  }
}
