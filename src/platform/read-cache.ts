/**
 * Per-process cache of single-resource reads (`GET /api/v1/agents/{uuid}` today), so that
 * repeated reads of an unchanged resource skip its SQL.
 *
 * - Key: the resource, the caller, the request's workspace context and role, and the service
 *   scope, so an answer is only ever served to a caller for whom it was computed.
 * - Invalidation is coarse on purpose: every mutation procedure (src/trpc/init.ts) calls
 *   {@link ReadCache.written} once it is done, which drops every entry of this process and,
 *   with Redis, of every other process (pub/sub on {@link READ_CACHE_CHANNEL}). No write path can
 *   be forgotten that way; background work that changes what a read shows (the runs and workflow
 *   issues) must call `written()` too.
 * - A read that raced with a write is not stored (a generation counter); entries live at most
 *   {@link READ_CACHE_TTL_MS}, which also bounds what another process without Redis, or a change
 *   made directly in the database, may leave stale. With Redis, nothing is served while the
 *   channel is not live, and every entry is dropped whenever writes announced by other processes
 *   may have been missed (src/platform/subscriber.ts).
 */
import type { RedisConnection } from './redis.ts'
import { InvalidationChannel, type CacheLog } from './subscriber.ts'

/** How long a read is served without asking the database again. */
export const READ_CACHE_TTL_MS = 5_000
/** Most entries kept per resource kind; the oldest is dropped beyond it. */
const READ_CACHE_MAX_ENTRIES = 2_000
/** Redis channel announcing writes, shared by every process of a deployment. */
export const READ_CACHE_CHANNEL = 'aw:read-cache:written'

interface Entry<T> {
  value: T
  /** Epoch milliseconds after which the entry is not served. */
  expiresAt: number
  generation: number
}

/** The cached reads of one resource kind; see the module comment. */
export class ReadStore<T> {
  readonly #owner: ReadCache
  readonly #entries = new Map<string, Entry<T>>()

  /** Use {@link ReadCache.store}, which registers the store for invalidation. */
  constructor(owner: ReadCache) {
    this.#owner = owner
  }

  /** Number of entries held (stale ones included until they are looked up or dropped). */
  get size(): number {
    return this.#entries.size
  }

  /**
   * The cached value of `key`, else `compute()`'s, stored for later reads unless a write
   * happened meanwhile. Values are shared between requests and must not be changed.
   */
  async read(key: string, compute: () => Promise<T>): Promise<T> {
    if (!this.#owner.usable) return compute()
    const hit = this.#entries.get(key)
    const generation = this.#owner.generation
    if (hit && hit.generation === generation && hit.expiresAt > Date.now()) return hit.value
    const value = await compute()
    if (generation === this.#owner.generation && this.#owner.usable) {
      this.#entries.delete(key)
      while (this.#entries.size >= READ_CACHE_MAX_ENTRIES) {
        const oldest = this.#entries.keys().next()
        if (oldest.done) break
        this.#entries.delete(oldest.value)
      }
      this.#entries.set(key, { value, expiresAt: Date.now() + this.#owner.ttlMs, generation })
    }
    return value
  }

  /** Drops every entry. */
  clear(): void {
    this.#entries.clear()
  }
}

/** The read caches of a process; one instance per runtime, created by {@link ReadCache.create}. */
export class ReadCache {
  /** Entry lifetime; 0 turns caching off (writes are still announced to other processes). */
  readonly ttlMs: number
  readonly #stores = new Set<ReadStore<unknown>>()
  #channel: InvalidationChannel | undefined
  #generation = 0

  private constructor(ttlMs: number) {
    this.ttlMs = ttlMs
  }

  /**
   * Creates the cache; with `redis`, writes are announced on it and (caching on) a second
   * connection subscribes to the other processes' (src/platform/subscriber.ts).
   * @throws when the subscriber cannot connect.
   */
  static async create(options: { ttlMs: number; log: CacheLog; redis?: RedisConnection }): Promise<ReadCache> {
    const cache = new ReadCache(Math.max(0, options.ttlMs))
    cache.#channel = await InvalidationChannel.open({
      redis: options.redis,
      channel: READ_CACHE_CHANNEL,
      label: 'read cache',
      log: options.log,
      listen: cache.ttlMs > 0,
      onMessage: () => cache.#drop(),
      onLost: () => cache.#drop(),
      onEnd: () => void cache.close(),
    })
    return cache
  }

  /**
   * A new store of one resource kind's reads, dropped with every write like the others (the
   * owning service keeps it: `GET /api/v1/agents/{uuid}` in src/agents/agents.service.ts).
   */
  store<T>(): ReadStore<T> {
    const store = new ReadStore<T>(this)
    this.#stores.add(store)
    return store
  }

  /** Entries held across every store. */
  get size(): number {
    let size = 0
    for (const store of this.#stores) size += store.size
    return size
  }

  /** Changes with every write; a read computed under an older value is not stored. */
  get generation(): number {
    return this.#generation
  }

  /** Whether entries may be served: caching is on and, with Redis, the subscription is live. */
  get usable(): boolean {
    return this.ttlMs > 0 && this.#channel?.live !== false
  }

  /**
   * Announces a write: drops every entry here at once and, with Redis, in every other process
   * (awaited, so the write's response goes out after it). A failed publication is logged.
   */
  async written(): Promise<void> {
    this.#drop()
    await this.#channel?.announce()
  }

  /** Empties the cache and closes the subscriber connection, if any. */
  async close(): Promise<void> {
    this.#drop()
    await this.#channel?.close()
  }

  #drop(): void {
    this.#generation += 1
    for (const store of this.#stores) store.clear()
  }
}
