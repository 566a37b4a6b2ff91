/**
 * Rate limits (docs/api/authentication.md: sign-in limited per e-mail and per address), built on
 * rate-limiter-flexible: in memory, or in Redis when REDIS_URL is set so every process shares
 * the counters. Applied as tRPC middleware so the REST and tRPC surfaces are both covered.
 *
 * While Redis cannot be reached (a call fails, times out, or the circuit of
 * src/platform/redis.ts refuses it at once), each Redis limiter falls back to its
 * `insuranceLimiter`: the same limit counted in this process's memory (docs/operations.md,
 * "Redis outages"). A client that spreads its attempts over N processes then gets up to N times
 * the limit, and the memory counts are not carried back into Redis when it returns.
 */
import type { RedisClientType } from '@keyv/redis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { Config } from '../platform/config.ts'
import { TooManyRequestsError } from '../platform/errors.ts'
import type { RedisConnection } from '../platform/redis.ts'

/** The process's limiters. */
export interface RateLimits {
  signInPerEmail: RateLimiterAbstract
  signInPerAddress: RateLimiterAbstract
}

/**
 * The node-redis calls RateLimiterRedis makes (EVAL to count; MULTI and DEL for reads and
 * deletes), the counting one through the connection's circuit: refused at once while it is open,
 * so the limiter goes to its insurance without waiting.
 */
function storeClient(redis: RedisConnection) {
  const { client } = redis
  return {
    eval: (...args: Parameters<RedisClientType['eval']>) => redis.call((c) => c.eval(...args)),
    multi: () => client.multi(),
    del: (...args: Parameters<RedisClientType['del']>) => redis.call((c) => c.del(...args)),
  }
}

/**
 * Creates the limiters; `prefix` separates processes that must not share counters (tests).
 * @param redis the process's Redis connection (counters shared by every process, with a
 *   per-process insurance while it is unreachable; module comment), or undefined for in-memory
 *   counters
 */
export function createRateLimits(config: Config, redis: RedisConnection | undefined, prefix = 'rl'): RateLimits {
  const make = (name: string, points: number): RateLimiterAbstract => {
    const options = { keyPrefix: `${prefix}:${name}`, points, duration: config.signIn.windowSeconds }
    if (!redis) return new RateLimiterMemory(options)
    return new RateLimiterRedis({
      ...options,
      storeClient: storeClient(redis),
      useRedisPackage: true,
      insuranceLimiter: new RateLimiterMemory(options),
    })
  }
  return {
    signInPerEmail: make('sign-in-email', config.signIn.maxPerEmail),
    signInPerAddress: make('sign-in-address', config.signIn.maxPerAddress),
  }
}

/**
 * Takes one point from each limiter for its key.
 * @throws TooManyRequestsError with the longest wait when any limiter is exhausted.
 */
export async function consume(pairs: [RateLimiterAbstract, string][]): Promise<void> {
  const results = await Promise.allSettled(pairs.map(([limiter, key]) => limiter.consume(key)))
  let waitMs = 0
  for (const result of results) {
    if (result.status === 'fulfilled') continue
    if (!(result.reason instanceof RateLimiterRes)) throw result.reason
    waitMs = Math.max(waitMs, result.reason.msBeforeNext)
  }
  if (waitMs > 0) throw new TooManyRequestsError(Math.max(1, Math.ceil(waitMs / 1000)))
}
