/**
 * The metrics cache (specification: "Limits"; API.md section 6): a tRPC middleware placed after
 * the input parser, so only valid requests reach it and invalid ones never create an entry.
 * Answers are kept 5 minutes in the Keyv store of the app (memory, or Redis when REDIS_URL is
 * set, shared by every process), keyed on the procedure path, the service scope, the workspace
 * context, the caller and the JSON of the parsed input; an identical request within
 * the window answers the same `cached_at`. `Cache-Control: no-cache` recomputes (and stores).
 * Concurrent identical misses of one process compute once.
 */
import { createHash } from 'node:crypto'
import { middlewareMarker } from '@trpc/server/unstable-core-do-not-import'
import { middleware } from './init.ts'

/** Lifetime of a metrics answer. */
const METRICS_CACHE_TTL_MS = 5 * 60 * 1000

/** Computations under way in this process, by cache key. */
const pending = new Map<string, Promise<unknown>>()

/** True when the request asks to bypass the cache. */
function noCache(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '')
  return /(^|[\s,])no-cache([\s,]|$)/i.test(value)
}

/**
 * Use after `.input(...)` and `.output(...)` on `workspaceProcedure`. A hit is the procedure's
 * result: the resolver does not run, and the output parser (which runs outside this middleware)
 * checks the stored value like a computed one. The key holds the parsed input as JSON: the zod
 * parser writes an object's keys in its schema's order whatever the request's order, so equal
 * inputs give equal keys.
 */
export const metricsCache = middleware(async ({ ctx, path, input, next }) => {
  // The workspace's uuid, not its id: unique across databases that might share one Redis.
  const workspaceId = ctx.workspace?.workspace.uuid ?? null
  const userId = ctx.auth?.user.id ?? null
  const key = `metrics:${createHash('sha256')
    .update(JSON.stringify([path, ctx.serviceId, workspaceId, userId, input]))
    .digest('hex')}`
  /** The answer `data` as this procedure's result, without running the resolver. */
  const answer = (data: unknown) => ({ ok: true as const, data, marker: middlewareMarker })
  const bypass = noCache(ctx.headers['cache-control'])
  // Join a computation under way. No await between this look-up and registering our own below,
  // so of several identical concurrent misses exactly one computes.
  const joined = bypass ? undefined : pending.get(key)
  if (joined) {
    const hit = await joined
    if (hit !== undefined) return answer(hit)
  }
  let settle: (value: unknown) => void = () => {}
  const promise = new Promise<unknown>((resolve) => (settle = resolve))
  pending.set(key, promise)
  try {
    if (!bypass) {
      const hit: unknown = await ctx.cache.get(key)
      if (hit !== undefined) {
        settle(hit)
        return answer(hit)
      }
    }
    const result = await next()
    if (result.ok) {
      await ctx.cache.set(key, result.data, METRICS_CACHE_TTL_MS)
      settle(result.data)
    }
    return result
  } finally {
    settle(undefined)
    if (pending.get(key) === promise) pending.delete(key)
  }
})
