/**
 * The Redis pub/sub channel through which the per-process caches (auth-cache.ts, read-cache.ts)
 * tell each other about writes. Each cache owns one {@link InvalidationChannel}: it publishes on
 * the main connection (src/platform/redis.ts, through its circuit) and subscribes on a connection
 * of its own (a subscribed connection can run no other command). Messages are JSON objects
 * carrying the sender's `origin`, so a process skips its own.
 *
 * Lost messages (docs/operations.md, "Redis outages"): an invalidation that is not delivered
 * would leave a stale entry in another process, so
 *
 * - the channel is {@link InvalidationChannel.live} only while its subscription is up, the main
 *   connection is up, and every publication of this process got through; the caches serve
 *   nothing while it is not;
 * - whenever messages may have been lost (the subscription or the main connection dropped or came
 *   back, a publication failed, another process announced that one of its own failed), the cache
 *   drops every entry (`onLost`: a generation bump, so nothing read before is stored after);
 * - a process whose publication failed owes the others a catch-all: its next publication (or,
 *   as soon as Redis answers again, one of its own) is `{all: true}`, on which every other
 *   process drops everything too.
 */
import { randomUUID } from 'node:crypto'
import type { RedisClientType } from '@keyv/redis'
import { closeClient, REDIS_COMMAND_TIMEOUT_MS, withDeadline, type RedisConnection, type RedisLog } from './redis.ts'

/** The part of a pino/Fastify logger the caches and the run bus write to (services do not import Fastify). */
export type CacheLog = RedisLog

/** What {@link InvalidationChannel.open} needs. */
interface ChannelOptions {
  /** The deployment's Redis; without it the channel announces nothing and hears nothing. */
  redis?: RedisConnection
  /** Redis channel name, shared by every process of a deployment. */
  channel: string
  /** Names the cache in log lines ("auth cache"). */
  label: string
  log: CacheLog
  /** Whether to subscribe at all (a cache that holds nothing has nothing to drop). */
  listen: boolean
  /** Called with each other process's message: the object announced, without its `origin`. */
  onMessage: (message: object) => void
  /** Called whenever messages may have been lost (module comment): the cache must drop everything. */
  onLost: () => void
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
  /** A publication failed: the next one is a catch-all, and nothing is served until it is out. */
  #owed = false
  #stopWatching: (() => void) | undefined

  private constructor(options: ChannelOptions) {
    this.#options = options
  }

  /**
   * Opens the channel: with `redis` and `listen`, a connection of its own subscribes to it. The
   * subscriber never keeps the process alive and closes with `redis`, or with {@link close}.
   * @throws when the subscriber cannot connect or subscribe within its deadlines (start-up
   *   fails, as for Redis itself).
   */
  static async open(options: ChannelOptions): Promise<InvalidationChannel> {
    const channel = new InvalidationChannel(options)
    const { redis, label } = options
    if (!redis) return channel
    channel.#stopWatching = redis.onChange((up) => channel.#connectionChanged(up))
    redis.client.once('end', options.onEnd)
    if (!options.listen) return channel
    const subscriber = await redis.subscriber(label)
    try {
      await withDeadline(
        subscriber.subscribe(options.channel, (raw) => channel.#receive(raw)),
        REDIS_COMMAND_TIMEOUT_MS,
        `${label} SUBSCRIBE`,
      )
    } catch (error) {
      await closeClient(subscriber)
      throw error
    }
    // Ready again after a drop (node-redis has subscribed again by then): messages sent meanwhile are lost.
    subscriber.on('ready', () => options.onLost())
    // Dropped: nothing is served from now on (`live`); drop the entries at once as well.
    subscriber.on('error', () => {
      if (!subscriber.isReady) options.onLost()
    })
    channel.#subscriber = subscriber
    return channel
  }

  /**
   * Whether a cache may serve its entries: true without Redis; with it, while the subscription
   * (when there is one) and the main connection are up and no publication of this process is owed.
   */
  get live(): boolean {
    const { redis } = this.#options
    if (!redis) return true
    return !this.#owed && redis.up && (this.#subscriber === undefined || this.#subscriber.isReady)
  }

  /**
   * Publishes `message` to the other processes, if there is a Redis: awaited by the caller, so a
   * write's response goes out after it, and bounded by the command deadline. A failed publication
   * is logged (with `message`: ids, never a secret), not thrown (the write itself has happened);
   * this process then drops everything and owes the others a catch-all (module comment).
   */
  async announce(message: object = {}): Promise<void> {
    const { redis, channel, label, log } = this.#options
    if (!redis) return
    const owed = this.#owed
    const payload = owed ? { all: true } : message
    try {
      await redis.call((client) => client.publish(channel, JSON.stringify({ ...payload, origin: this.#origin })))
      if (owed) this.#owed = false
    } catch (error) {
      if (!owed)
        log.warn(
          { err: error, ...message },
          `${label} invalidation not published: this process serves nothing from the cache until Redis answers, then tells the others to drop everything`,
        )
      this.#owed = true
      this.#options.onLost()
    }
  }

  /** Closes the subscriber connection, if any. Never throws. */
  async close(): Promise<void> {
    this.#stopWatching?.()
    this.#stopWatching = undefined
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    if (subscriber) await closeClient(subscriber)
  }

  #connectionChanged(up: boolean): void {
    this.#options.onLost()
    if (up && this.#owed) void this.announce()
  }

  #receive(raw: string): void {
    const parsed = parse(raw)
    if (!parsed) this.#options.log.warn({}, `ignored a malformed ${this.#options.label} invalidation`)
    else if (parsed.origin === this.#origin) return
    else if ('all' in parsed.message && parsed.message.all === true) this.#options.onLost()
    else this.#options.onMessage(parsed.message)
  }
}
