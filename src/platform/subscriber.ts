/**
 * The Redis pub/sub channel through which the per-process caches (auth-cache.ts, read-cache.ts)
 * tell each other about writes. Each cache owns one {@link InvalidationChannel}: it publishes on
 * the main connection and subscribes on a duplicate of it (a subscribed connection can run no
 * other command). Messages are JSON objects carrying the sender's `origin`, so a process skips
 * its own.
 */
import { randomUUID } from 'node:crypto'
import type { RedisClientType } from '@keyv/redis'

/** The part of a pino/Fastify logger the caches write to (services do not import Fastify). */
export interface CacheLog {
  warn: (object: object, message: string) => void
  error: (object: object, message: string) => void
}

/** What {@link InvalidationChannel.open} needs. */
interface ChannelOptions {
  /** The deployment's Redis; without it the channel announces nothing and hears nothing. */
  redis?: RedisClientType
  /** Redis channel name, shared by every process of a deployment. */
  channel: string
  /** Names the cache in log lines ("auth cache"). */
  label: string
  log: CacheLog
  /** Whether to subscribe at all (a cache that holds nothing has nothing to drop). */
  listen: boolean
  /** Called with each other process's message: the object announced, without its `origin`. */
  onMessage: (message: object) => void
  /**
   * Called when the subscription is ready again after a drop: messages sent meanwhile are lost,
   * so the cache must start empty.
   */
  onReconnect: () => void
  /** Called when the main connection ends (the cache closes with it). */
  onEnd: () => void
}

function parse(raw: string): { origin: string; message: object } | null {
  try {
    const value: unknown = JSON.parse(raw)
    if (typeof value !== 'object' || value === null || !('origin' in value) || typeof value.origin !== 'string') return null
    const { origin, ...message } = value
    return { origin, message }
  } catch {
    return null
  }
}

/** See the module comment. */
export class InvalidationChannel {
  readonly #options: ChannelOptions
  /** Tells this process's own messages apart from the others'. */
  readonly #origin = randomUUID()
  #subscriber: RedisClientType | undefined

  private constructor(options: ChannelOptions) {
    this.#options = options
  }

  /**
   * Opens the channel: with `redis` and `listen`, a duplicate connection subscribes to it. The
   * subscriber never keeps the process alive and closes with `redis`, or with {@link close}.
   * @throws when the subscriber cannot connect or subscribe (start-up fails, as for Redis itself).
   */
  static async open(options: ChannelOptions): Promise<InvalidationChannel> {
    const channel = new InvalidationChannel(options)
    const { redis, label, log } = options
    if (!redis || !options.listen) return channel
    const subscriber = redis.duplicate()
    subscriber.on('error', (error: unknown) => log.error({ err: error }, `${label} subscriber error`))
    await subscriber.connect()
    await subscriber.subscribe(options.channel, (raw) => channel.#receive(raw))
    subscriber.on('ready', options.onReconnect)
    subscriber.unref()
    redis.once('end', options.onEnd)
    channel.#subscriber = subscriber
    return channel
  }

  /** False while the subscription is down (invalidations could be lost); true without one. */
  get live(): boolean {
    return this.#subscriber === undefined || this.#subscriber.isReady
  }

  /**
   * Publishes `message` to the other processes, if there is a Redis. Awaited by the caller, so a
   * write's response goes out after it; a failed publication is logged with `message`, not
   * thrown (the write itself has happened).
   */
  async announce(message: object = {}): Promise<void> {
    const { redis, channel, label, log } = this.#options
    if (!redis) return
    if (!redis.isReady) {
      log.error(message, `${label} invalidation not published: Redis is not connected`)
      return
    }
    try {
      await redis.publish(channel, JSON.stringify({ ...message, origin: this.#origin }))
    } catch (error) {
      log.error({ err: error, ...message }, `${label} invalidation not published`)
    }
  }

  /** Closes the subscriber connection, if any. */
  async close(): Promise<void> {
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    if (subscriber?.isOpen) {
      await subscriber
        .quit()
        .catch((error: unknown) => this.#options.log.warn({ err: error }, `could not close the ${this.#options.label} subscriber`))
    }
  }

  #receive(raw: string): void {
    const parsed = parse(raw)
    if (!parsed) this.#options.log.warn({}, `ignored a malformed ${this.#options.label} invalidation`)
    else if (parsed.origin !== this.#origin) this.#options.onMessage(parsed.message)
  }
}
