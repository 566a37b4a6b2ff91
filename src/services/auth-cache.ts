/**
 * Per-process cache of resolved bearer tokens (API.md section 3), so that repeated requests with
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
 *   token may keep working there for up to the TTL (README, "API notes"). Changes made outside
 *   the services (raw SQL) are seen the same way, after the TTL.
 * - A look-up that raced with an invalidation is not stored (a generation counter), and while
 *   the Redis subscription is down nothing is served from the cache: invalidations could be lost.
 */
import { randomUUID } from 'node:crypto'
import type { RedisClientType } from '@keyv/redis'
import { toDate } from '../schemas/wire.ts'
import { subscribe } from './subscriber.ts'
import type { AuthContext } from './auth.service.ts'

/** How long a resolved token is trusted without asking the database again. */
export const AUTH_CACHE_TTL_MS = 5_000
/** Most entries kept; the oldest is dropped beyond it. */
export const AUTH_CACHE_MAX_ENTRIES = 10_000
/** Redis channel of invalidations, shared by every process of a deployment. */
export const AUTH_CACHE_CHANNEL = 'aw:auth-cache:invalidate'

/** What to drop: every entry of these users, and every entry whose primary or bound workspace is one of these. */
export interface AuthInvalidation {
  users?: number[]
  workspaces?: number[]
}

/** The part of a pino/Fastify logger the cache writes to (services do not import Fastify). */
export interface AuthCacheLog {
  warn: (object: object, message: string) => void
  error: (object: object, message: string) => void
}

interface Entry {
  auth: AuthContext
  /** Epoch milliseconds after which the entry is not served. */
  expiresAt: number
  userId: number
  workspaceIds: number[]
}

interface Message {
  origin: string
  users: number[]
  workspaces: number[]
}

/** The cache key of a token (hex SHA-256 of the plaintext) in a service scope (null: none). */
export const authCacheKey = (tokenHash: string, serviceId: string | null): string => `${tokenHash}:${serviceId ?? ''}`

const ids = (value: unknown): number[] =>
  Array.isArray(value) ? value.filter((id): id is number => typeof id === 'number' && Number.isFinite(id)) : []

function parseMessage(raw: string): Message | null {
  try {
    const value: unknown = JSON.parse(raw)
    if (typeof value !== 'object' || value === null || !('origin' in value) || typeof value.origin !== 'string') return null
    return {
      origin: value.origin,
      users: 'users' in value ? ids(value.users) : [],
      workspaces: 'workspaces' in value ? ids(value.workspaces) : [],
    }
  } catch {
    return null
  }
}

/** See the module comment. One instance per process (per runtime), created by {@link AuthCache.create}. */
export class AuthCache {
  /** Entry lifetime; 0 turns caching off (invalidations are still published to other processes). */
  readonly ttlMs: number
  readonly #log: AuthCacheLog
  readonly #entries = new Map<string, Entry>()
  readonly #byUser = new Map<number, Set<string>>()
  readonly #byWorkspace = new Map<number, Set<string>>()
  /** Tells this process's own messages apart from the others'. */
  readonly #origin = randomUUID()
  readonly #publisher: RedisClientType | undefined
  #subscriber: RedisClientType | undefined
  #generation = 0

  private constructor(ttlMs: number, log: AuthCacheLog, publisher: RedisClientType | undefined) {
    this.ttlMs = ttlMs
    this.#log = log
    this.#publisher = publisher
  }

  /**
   * Creates the cache. With `redis`, invalidations are published on it, and (when `ttlMs > 0`)
   * a second connection subscribes to the others' (a subscribed connection can run no other
   * command). The subscriber closes with `redis`, or with {@link close}.
   * @throws when the subscriber cannot connect (start-up fails, as it does for Redis itself).
   */
  static async create(options: { ttlMs: number; log: AuthCacheLog; redis?: RedisClientType }): Promise<AuthCache> {
    const cache = new AuthCache(Math.max(0, options.ttlMs), options.log, options.redis)
    if (options.redis && cache.ttlMs > 0) {
      cache.#subscriber = await subscribe(options.redis, AUTH_CACHE_CHANNEL, {
        label: 'auth cache',
        log: options.log,
        onMessage: (raw) => cache.#receive(raw),
        // After a reconnect, messages sent meanwhile are lost: start empty.
        onReconnect: () => cache.clear(),
        onEnd: () => void cache.close(),
      })
    }
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
    return this.ttlMs > 0 && (this.#subscriber === undefined || this.#subscriber.isReady)
  }

  /** The cached caller for `key`, or undefined (not cached, expired, or the cache is unusable). */
  get(key: string): AuthContext | undefined {
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
  set(key: string, auth: AuthContext, generation: number): void {
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
  replace(key: string, auth: AuthContext): void {
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
    const publisher = this.#publisher
    if (!publisher) return
    if (!publisher.isReady) {
      this.#log.error({ users, workspaces }, 'auth cache invalidation not published: Redis is not connected')
      return
    }
    try {
      const message: Message = { origin: this.#origin, users, workspaces }
      await publisher.publish(AUTH_CACHE_CHANNEL, JSON.stringify(message))
    } catch (error) {
      this.#log.error({ err: error, users, workspaces }, 'auth cache invalidation not published')
    }
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
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    if (subscriber?.isOpen) {
      await subscriber.quit().catch((error: unknown) => this.#log.warn({ err: error }, 'could not close the auth cache subscriber'))
    }
  }

  #receive(raw: string): void {
    const message = parseMessage(raw)
    if (!message) {
      this.#log.warn({}, 'ignored a malformed auth cache invalidation')
      return
    }
    if (message.origin !== this.#origin) this.#drop(message.users, message.workspaces)
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
