import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** An instance's env for each of the two stores a suite runs on: the embedded one, and Redis (REDIS_URL) under a prefix of its own. */
export function storeBackends(embedded: string, redis: string): Array<[string, Record<string, string>]> {
  return [
    [embedded, {}],
    [
      redis,
      {
        REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        ANVIL_REDIS_PREFIX: `anvil-test-${randomBytes(4).toString('hex')}:`,
      },
    ],
  ];
}

/** Removes what a suite left in Redis under its env's ANVIL_REDIS_PREFIX (nothing on the embedded store). */
export async function removeRedisKeys(env: Record<string, string>): Promise<void> {
  if (env.REDIS_URL === undefined) return;
  const redis = new Redis(env.REDIS_URL);
  const keys = await redis.keys(`${env.ANVIL_REDIS_PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
