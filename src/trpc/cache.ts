/**
 * The metrics cache (specification: "Limits"; API.md section 6): a tRPC middleware placed after
 * the input parser, so only valid requests reach it and invalid ones never create an entry.
 * Answers are kept 5 minutes in the Keyv store of the app (memory, or Redis when REDIS_URL is
 * set, shared by every process), keyed on the procedure path, the service scope, the workspace
 * context, the caller and the canonical JSON of the parsed input; an identical request within
 * the window answers the same `cached_at`. `Cache-Control: no-cache` recomputes (and stores).
 * Concurrent identical misses of one process compute once.
 */
import { createHash } from 'node:crypto'
import { middleware } from './init.ts'

/** Lifetime of a metrics answer. */
export const METRICS_CACHE_TTL_MS = 5 * 60 * 1000

/** JSON with object keys sorted, so equal inputs give equal keys whatever their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/** Computations under way in this process, by cache key. */
const pending = new Map<string, Promise<unknown>>()

/** True when the request asks to bypass the cache. */
function noCache(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '')
  return /(^|[\s,])no-cache([\s,]|$)/i.test(value)
}

/**
 * Use after `.input(...)` on `workspaceProcedure`. The resolver receives the cached answer in
 * `ctx.cachedAnswer` (undefined on a miss) and returns it instead of computing:
 * see {@link cachedOr}.
 */
export const metricsCache = middleware(async ({ ctx, path, input, next }) => {
  // The workspace's uuid, not its id: unique across databases that might share one Redis.
  const workspaceId = ctx.workspace?.workspace.uuid ?? null
  const userId = ctx.auth?.user.id ?? null
  const key = `metrics:${createHash('sha256')
    .update(canonicalJson([path, ctx.serviceId, workspaceId, userId, input]))
    .digest('hex')}`
  const bypass = noCache(ctx.headers['cache-control'])
  // Join a computation under way. No await between this look-up and registering our own below,
  // so of several identical concurrent misses exactly one computes.
  const joined = bypass ? undefined : pending.get(key)
  if (joined) {
    const hit = await joined
    if (hit !== undefined) return next({ ctx: { cachedAnswer: hit } })
  }
  let settle: (value: unknown) => void = () => {}
  const promise = new Promise<unknown>((resolve) => (settle = resolve))
  pending.set(key, promise)
  try {
    if (!bypass) {
      const hit: unknown = await ctx.cache.get(key)
      if (hit !== undefined) {
        settle(hit)
        return next({ ctx: { cachedAnswer: hit } })
      }
    }
    const result = await next({ ctx: { cachedAnswer: undefined } })
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

/** The cached answer when the middleware found one, else the computed one. */
export function cachedOr<T>(cached: unknown, parse: (value: unknown) => T, compute: () => Promise<T>): Promise<T> | T {
  return cached === undefined ? compute() : parse(cached)
}
