/**
 * The metrics cache (specification: "Limits"; docs/api/metrics.md): a tRPC middleware on the
 * metrics procedures and the agent leaderboard (docs/api/generate-and-leaderboard.md), in the one level that first authenticates and resolves the workspace
 * context (so the caller's access to the workspace is checked on every request, hit or miss;
 * src/trpc/init.ts, `inWorkspace`), and before the input and output parsers. Answers are kept 5
 * minutes in the Keyv store of the app (memory, or Redis when REDIS_URL is set, shared by every
 * process) as their JSON text, keyed on the procedure path, the service scope, the workspace
 * context, the caller and every parameter; an identical request within the window answers the
 * same `cached_at`. `Cache-Control: no-cache` recomputes (and stores). Concurrent identical
 * misses of one process compute once.
 *
 * A hit runs neither parser: the key holds the request's parameters as canonical JSON (object
 * keys sorted, so key order does not matter), and an entry is only ever written after the input
 * parser accepted those very parameters and the output parser accepted the answer. Validation is
 * a pure function of the parameters, so a request whose parameters have an entry is valid, and
 * the stored answer was checked when it was computed; anything that is not plain JSON (possible
 * only for in-process tRPC callers) skips the cache and is validated. With Redis a hit parses the
 * stored text; without it, the process answers from a frozen parsed copy of its own entry.
 *
 * With Redis, a read of the store that fails, times out or is refused by the circuit
 * (src/platform/redis.ts) is a miss, and a write that fails is dropped: Keyv answers undefined
 * or false instead of throwing, so the request computes and answers (docs/operations.md, "Redis
 * outages").
 */
import { hash } from 'node:crypto'
import { middlewareMarker } from '@trpc/server/unstable-core-do-not-import'
import type { Keyv } from 'keyv'
import type { Ctx } from './context.ts'
import { inWorkspace, procedure, type InWorkspace } from './init.ts'

/** Lifetime of a metrics answer. */
const METRICS_CACHE_TTL_MS = 5 * 60 * 1000

/** Prefix of the keys; a new version when the stored form or the key changes, so old entries are never read. */
const KEY_PREFIX = 'metrics:v2:'

/** Computations under way in this process, by the request's identity: they settle with the answer's JSON text, or undefined. */
const pending = new Map<string, Promise<string | undefined>>()

/** A parsed answer and when its entry expires (ms since the epoch). */
interface LocalCopy {
  value: unknown
  expires: number
}

/**
 * Parsed copies of the entries, for each Keyv whose store lives in this process (a `Map`: no
 * Redis). There every entry is written by this process through {@link cachedWorkspaceProcedure},
 * which writes its copy at the same time, so the copy is the entry: a hit skips Keyv's read and
 * the JSON parse. A store shared with other processes (Redis) is always read. The copies are frozen
 * (also the answer of the request that computed one), so no caller can change what later hits answer.
 */
const localCopies = new WeakMap<Keyv, Map<string, LocalCopy>>()
/** Copies kept per store at most; the oldest go first (Keyv's own Map keeps every entry until read after expiry). */
const LOCAL_COPIES_MAX = 5_000

function localCopiesOf(cache: Keyv): Map<string, LocalCopy> | undefined {
  if (!(cache.store instanceof Map)) return undefined
  let copies = localCopies.get(cache)
  if (!copies) localCopies.set(cache, (copies = new Map()))
  return copies
}

function keepCopy(copies: Map<string, LocalCopy>, key: string, value: unknown, expires: number): void {
  copies.delete(key)
  if (copies.size >= LOCAL_COPIES_MAX) {
    const oldest = copies.keys().next()
    if (!oldest.done) copies.delete(oldest.value)
  }
  copies.set(key, { value: deepFreeze(value), expires })
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item)
    Object.freeze(value)
  }
  return value
}

/** True when the request asks to bypass the cache. */
function noCache(header: string | string[] | undefined): boolean {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '')
  return /(^|[\s,])no-cache([\s,]|$)/i.test(value)
}

const isPlainObject = (value: object): boolean => {
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/**
 * `value` as JSON with every object's keys sorted, or undefined when it is not plain JSON data
 * (strings, finite numbers, booleans, null, arrays and plain objects of them): such input is
 * never looked up, so two inputs share an entry only when they are the same JSON data.
 */
export function canonicalJson(value: unknown): string | undefined {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'number') return Number.isFinite(value) ? JSON.stringify(value) : undefined
  if (typeof value !== 'object') return undefined
  const parts: string[] = []
  if (Array.isArray(value)) {
    for (const item of value) {
      const part = canonicalJson(item)
      if (part === undefined) return undefined
      parts.push(part)
    }
    return `[${parts.join(',')}]`
  }
  if (!isPlainObject(value)) return undefined
  const record = value as Record<string, unknown>
  for (const key of Object.keys(record).sort()) {
    const part = canonicalJson(record[key])
    if (part === undefined) return undefined
    parts.push(`${JSON.stringify(key)}:${part}`)
  }
  return `{${parts.join(',')}}`
}

/**
 * The symbol under which an answer carries its own JSON text. The REST handler
 * (src/http/rest-handler.ts) sends that text as the body instead of serialising the answer again;
 * it is not enumerable, so the answer is unchanged for every other reader.
 */
const JSON_TEXT = Symbol('metrics cache: JSON text')

/** `answer` carrying `text`, which must be `JSON.stringify(answer)` (see {@link JSON_TEXT}). */
function withText(answer: object, text: string): object {
  if (!Object.isFrozen(answer)) Object.defineProperty(answer, JSON_TEXT, { value: text })
  return answer
}

/**
 * The JSON text a cached answer carries: exactly `JSON.stringify(answer)`, so a transport may send
 * it instead of serialising the answer; undefined for any other value.
 */
export function jsonTextOf(answer: object): string | undefined {
  const text: unknown = Reflect.get(answer, JSON_TEXT)
  return typeof text === 'string' ? text : undefined
}

/**
 * The stored text of an answer as the answer (carrying that text), or undefined when it is not
 * one we wrote (another version's entry, or a value that is not our JSON): such an entry is
 * recomputed. The text was written by `JSON.stringify`, so serialising the parsed answer again
 * gives the same text.
 */
function fromStored(stored: string | undefined): object | undefined {
  if (stored === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(stored)
  } catch {
    return undefined
  }
  return typeof value === 'object' && value !== null && isStamped(value) ? withText(value, stored) : undefined
}

/** An answer carries `cached_at` at its top (metrics) or in its `meta` (the agent leaderboard). */
function isStamped(value: object): boolean {
  if ('cached_at' in value) return true
  const meta: unknown = 'meta' in value ? value.meta : undefined
  return typeof meta === 'object' && meta !== null && 'cached_at' in meta
}

/**
 * `workspaceProcedure` with the metrics cache, as one middleware level (src/trpc/init.ts,
 * `inWorkspace`): add `.input(...)` and `.output(...)` after it (see the module comment). A hit
 * is the procedure's result, and neither the parsers nor the resolver run.
 */
export const cachedWorkspaceProcedure = procedure.use((opts) =>
  inWorkspace(opts, (ctx, carry) => cached(ctx, opts.path, opts.getRawInput, () => opts.next<InWorkspace>(carry))),
)

/** A hit: the stored answer as the procedure's result. */
type Hit = { ok: true; data: unknown; marker: typeof middlewareMarker }

/** The cache around `next` (the rest of the procedure: parsers and resolver) for one call. */
async function cached<R extends { ok: boolean; data?: unknown }>(
  ctx: Ctx & InWorkspace,
  path: string,
  getRawInput: () => Promise<unknown>,
  next: () => Promise<R>,
): Promise<R | Hit> {
  // No input at all is `{}` to the parsers (the list queries' prefault), so it is the same entry.
  const parameters = canonicalJson((await getRawInput()) ?? {})
  if (parameters === undefined) return next()
  // The workspace's uuid, not its id: unique across databases that might share one Redis.
  const workspaceUuid = ctx.workspace.workspace.uuid
  const userId = ctx.auth.user.id
  // In this process entries go by this text; in the store by its hash (bounded key length).
  const identity = `${JSON.stringify([path, ctx.serviceId, workspaceUuid, userId])}\n${parameters}`
  /** The answer `data` as this procedure's result, without running what follows. */
  const answer = (data: unknown): Hit => ({ ok: true, data, marker: middlewareMarker })
  const bypass = noCache(ctx.headers['cache-control'])
  // Join a computation under way. No await between this look-up and registering our own below,
  // so of several identical concurrent misses exactly one computes.
  const joined = bypass ? undefined : pending.get(identity)
  if (joined) {
    const hit = fromStored(await joined)
    if (hit !== undefined) return answer(hit)
  }
  const copies = localCopiesOf(ctx.cache)
  if (copies && !bypass) {
    const copy = copies.get(identity)
    if (copy && copy.expires > Date.now()) return answer(copy.value)
    if (copy) copies.delete(identity)
  }
  let settle: (value: string | undefined) => void = () => {}
  const promise = new Promise<string | undefined>((resolve) => (settle = resolve))
  pending.set(identity, promise)
  try {
    const key = `${KEY_PREFIX}${hash('sha256', identity, 'hex')}`
    if (!bypass) {
      // Raw, for the entry's expiry: the local copy expires with it.
      const entry = await ctx.cache.get<unknown>(key, { raw: true })
      const stored = typeof entry?.value === 'string' ? entry.value : undefined
      const hit = fromStored(stored)
      if (hit !== undefined) {
        if (copies && typeof entry?.expires === 'number') keepCopy(copies, identity, hit, entry.expires)
        settle(stored)
        return answer(hit)
      }
    }
    const result = await next()
    if (result.ok) {
      // What the output parser accepted, as the JSON the response will carry.
      const text = JSON.stringify(result.data)
      if (typeof result.data === 'object' && result.data !== null) withText(result.data, text)
      const expires = Date.now() + METRICS_CACHE_TTL_MS
      await ctx.cache.set(key, text, METRICS_CACHE_TTL_MS)
      if (copies) keepCopy(copies, identity, result.data, expires)
      settle(text)
    }
    return result
  } finally {
    settle(undefined)
    if (pending.get(identity) === promise) pending.delete(identity)
  }
}
