/**
 * Per-process cache of resolved bearer tokens (docs/api/authentication.md), so that repeated requests with
 * the same token skip the authentication query.
 *
 * - Key: SHA-256 of the token plus the service scope, so a token is cached per scope (a token of
 *   one scope stays unknown in another). Only successful look-ups are cached, never a 401.
 * - An entry lives at most {@link AUTH_CACHE_TTL_MS}, and never past the token's `expires_at`.
 * - Writes that change what an entry holds invalidate it at once in this process and, when Redis
 *   is configured, in every other process as soon as a message on a pub/sub channel
 *   ({@link AUTH_CACHE_CHANNEL}) arrives (Redis answers PUBLISH before it writes to subscribers):
 *   logout and token revocation (by user), a primary workspace renamed or deleted (by
 *   workspace), a member removed (by user). Any new write to `users`, a user's primary workspace
 *   or `access_tokens` must call {@link AuthCache.invalidate} too.
 * - Without Redis, other processes learn of a change only when their entry expires: a revoked
 *   token may keep working there for up to the TTL (docs/api). Changes made outside
 *   the services (raw SQL) are seen the same way, after the TTL.
 * - A look-up that raced with an invalidation is not stored (a generation counter). With Redis,
 *   nothing is served while the channel is not live (its subscription or the Redis connection is
 *   down, or an invalidation of this process could not be published), and every entry is
 *   dropped whenever invalidations may have been lost (src/platform/subscriber.ts).
 */
import type { RedisConnection } from './redis.ts'
import { toDate } from './sql.ts'
import { InvalidationChannel, type CacheLog } from './subscriber.ts'

/** How long a resolved token is trusted without asking the database again. */
export const AUTH_CACHE_TTL_MS = 5_000
/** Most entries kept; the oldest is dropped beyond it. */
const AUTH_CACHE_MAX_ENTRIES = 10_000
/** Redis channel of invalidations, shared by every process of a deployment. */
export const AUTH_CACHE_CHANNEL = 'aw:auth-cache:invalidate'

/** What to drop: every entry of these users, and every entry whose primary or bound workspace is one of these. */
export interface AuthInvalidation {
  users?: number[]
  workspaces?: number[]
}

/** The fields of a resolved caller the cache indexes and expires it by. */
export interface CacheableAuth {
  user: { id: number }
  primaryWorkspace: { id: number } | null
  token: { workspaceId: number | null; expiresAt: Date | string | null }
}

interface Entry<T> {
  auth: T
  /** Epoch milliseconds after which the entry is not served. */
  expiresAt: number
  userId: number
  workspaceIds: number[]
}

/** The cache key of a token (hex SHA-256 of the plaintext) in a service scope (null: none). */
export const authCacheKey = (tokenHash: string, serviceId: string | null): string => `${tokenHash}:${serviceId ?? ''}`

const ids = (message: object, key: 'users' | 'workspaces'): number[] => {
  const value: unknown = Reflect.get(message, key)
  return Array.isArray(value) ? value.filter((id): id is number => typeof id === 'number' && Number.isFinite(id)) : []
}

/** See the module comment. One instance per process (per runtime), created by {@link AuthCache.create}. */
export class AuthCache<T extends CacheableAuth = CacheableAuth> {
  /** Entry lifetime; 0 turns caching off (invalidations are still published to other processes). */
  readonly ttlMs: number
  readonly #entries = new Map<string, Entry<T>>()
  readonly #byUser = new Map<number, Set<string>>()
  readonly #byWorkspace = new Map<number, Set<string>>()
  #channel: InvalidationChannel | undefined
  #generation = 0

  private constructor(ttlMs: number) {
    this.ttlMs = ttlMs
  }

  /**
   * Creates the cache. With `redis`, invalidations are published on it, and (when `ttlMs > 0`)
   * a second connection subscribes to the others' (src/platform/subscriber.ts). The subscriber
   * closes with `redis`, or with {@link close}.
   * @throws when the subscriber cannot connect (start-up fails, as it does for Redis itself).
   */
  static async create<T extends CacheableAuth>(options: { ttlMs: number; log: CacheLog; redis?: RedisConnection }): Promise<AuthCache<T>> {
    const cache = new AuthCache<T>(Math.max(0, options.ttlMs))
    cache.#channel = await InvalidationChannel.open({
      redis: options.redis,
      channel: AUTH_CACHE_CHANNEL,
      label: 'auth cache',
      log: options.log,
      listen: cache.ttlMs > 0,
      onMessage: (message) => cache.#drop(ids(message, 'users'), ids(message, 'workspaces')),
      onLost: () => cache.clear(),
      onEnd: () => void cache.close(),
    })
    return cache
  }

  /** Number of entries held (expired ones included until they are looked up). */
  get size(): number {
    return this.#entries.size
  }

  /** Pass to {@link set}: a look-up started before an invalidation must not be stored after it. */
  get generation(): number {
    return this.#generation
  }

  /** Whether entries may be served: caching is on and, with Redis, the subscription is live. */
  #usable(): boolean {
    return this.ttlMs > 0 && this.#channel?.live !== false
  }

  /** The cached caller for `key`, or undefined (not cached, expired, or the cache is unusable). */
  get(key: string): T | undefined {
    if (this.#entries.size === 0 || !this.#usable()) return undefined
    const entry = this.#entries.get(key)
    if (!entry) return undefined
    if (entry.expiresAt <= Date.now()) {
      this.#delete(key)
      return undefined
    }
    return entry.auth
  }

  /**
   * Stores a resolved caller (frozen: requests share it) unless an invalidation happened since
   * `generation` was read, the token expires before the TTL would, or caching is off.
   */
  set(key: string, auth: T, generation: number): void {
    if (generation !== this.#generation || !this.#usable()) return
    const now = Date.now()
    const expiresAt = Math.min(now + this.ttlMs, auth.token.expiresAt ? toDate(auth.token.expiresAt).getTime() : Infinity)
    if (!(expiresAt > now)) return
    this.#delete(key)
    while (this.#entries.size >= AUTH_CACHE_MAX_ENTRIES) {
      const oldest = this.#entries.keys().next()
      if (oldest.done) break
      this.#delete(oldest.value)
    }
    const workspaceIds = [auth.primaryWorkspace?.id, auth.token.workspaceId].filter((id): id is number => typeof id === 'number')
    this.#entries.set(key, { auth, expiresAt, userId: auth.user.id, workspaceIds })
    this.#index(this.#byUser, auth.user.id, key)
    for (const id of workspaceIds) this.#index(this.#byWorkspace, id, key)
  }

  /** Replaces the caller of a live entry, keeping its expiry (used to record `last_used_at`). */
  replace(key: string, auth: T): void {
    const entry = this.#entries.get(key)
    if (entry) entry.auth = auth
  }

  /**
   * Drops the entries a write made stale, here at once and, with Redis, in every other process
   * (awaits the publication, so the write's response goes out after it). A failed publication
   * is logged, not thrown: the write itself has happened.
   */
  async invalidate(what: AuthInvalidation): Promise<void> {
    const users = what.users ?? []
    const workspaces = what.workspaces ?? []
    this.#drop(users, workspaces)
    await this.#channel?.announce({ users, workspaces })
  }

  /** Drops every entry (and anything being looked up right now). */
  clear(): void {
    this.#generation += 1
    this.#entries.clear()
    this.#byUser.clear()
    this.#byWorkspace.clear()
  }

  /** Empties the cache and closes the subscriber connection, if any. */
  async close(): Promise<void> {
    this.clear()
    await this.#channel?.close()
  }

  #drop(users: number[], workspaces: number[]): void {
    this.#generation += 1
    for (const id of users) for (const key of this.#byUser.get(id) ?? []) this.#delete(key)
    for (const id of workspaces) for (const key of this.#byWorkspace.get(id) ?? []) this.#delete(key)
  }

  #index(index: Map<number, Set<string>>, id: number, key: string): void {
    let keys = index.get(id)
    if (!keys) index.set(id, (keys = new Set()))
    keys.add(key)
  }

  #unindex(index: Map<number, Set<string>>, id: number, key: string): void {
    const keys = index.get(id)
    if (!keys) return
    keys.delete(key)
    if (keys.size === 0) index.delete(id)
  }

  #delete(key: string): void {
    const entry = this.#entries.get(key)
    if (!entry) return
    this.#entries.delete(key)
    this.#unindex(this.#byUser, entry.userId, key)
    for (const id of entry.workspaceIds) this.#unindex(this.#byWorkspace, id, key)
  }
}
