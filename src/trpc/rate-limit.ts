/**
 * Rate limits (docs/api/authentication.md: sign-in limited per e-mail and per address), built on
 * rate-limiter-flexible: in memory, or in Redis when REDIS_URL is set so every process shares
 * the counters. Applied as tRPC middleware so the REST and tRPC surfaces are both covered.
 */
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'
import type { RedisClientType } from '@keyv/redis'
import type { Config } from '../platform/config.ts'
import { TooManyRequestsError } from '../platform/errors.ts'

/** The process's limiters. */
export interface RateLimits {
  signInPerEmail: RateLimiterAbstract
  signInPerAddress: RateLimiterAbstract
}

/**
 * Creates the limiters; `prefix` separates processes that must not share counters (tests).
 * @param redis a connected node-redis client, or undefined for in-memory counters
 */
export function createRateLimits(config: Config, redis: RedisClientType | undefined, prefix = 'rl'): RateLimits {
  const make = (name: string, points: number): RateLimiterAbstract => {
    const options = { keyPrefix: `${prefix}:${name}`, points, duration: config.signIn.windowSeconds }
    return redis
      ? new RateLimiterRedis({ ...options, storeClient: redis, useRedisPackage: true })
      : new RateLimiterMemory(options)
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
