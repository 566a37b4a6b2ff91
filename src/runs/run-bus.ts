/**
 * Live delivery of run events and cancel requests between the process that executes a run and
 * the processes whose clients follow it (docs/api/runs.md).
 *
 * - The event log in `run_events` is the truth; the bus only wakes followers. An event is
 *   published after it is stored, so a follower that subscribes first and then reads the log
 *   misses nothing (src/runs/run-log.ts, `followRun`).
 * - In one process, listeners are called directly. With Redis, events are also published on
 *   `aw:run:events:<run id>` (a channel per run, subscribed only while someone follows it) and
 *   cancel requests on `aw:run:cancel`; each message carries the sender's `origin`, so a process
 *   skips its own.
 * - Redis outages (docs/operations.md, "Redis outages"): every publication and subscription has
 *   the deadlines of src/platform/redis.ts, and a failure is logged, never thrown. While a run's
 *   live delivery is not assured ({@link RunBus.isLive} false: the subscription is down or did
 *   not take, or Redis is unavailable), its followers poll the stored events instead
 *   (`followRun`). A run whose subscription did not take is subscribed again when the subscriber
 *   connection is back. A cancel that cannot be published still ends the run `canceled` in the
 *   database, and its executor notices when it tries to finish (docs/api/runs.md).
 */
import type { RunEventRecord } from './run.schema.ts'
import { randomUUID } from 'node:crypto'
import type { RedisClientType } from '@keyv/redis'
import { closeClient, REDIS_COMMAND_TIMEOUT_MS, RedisUnavailableError, withDeadline, type RedisConnection } from '../platform/redis.ts'
import type { CacheLog } from '../platform/subscriber.ts'
import { isRecord } from '../access/wire.ts'
import { countRunEndings } from './run-metrics.ts'

type Listener = (events: RunEventRecord[]) => void

const EVENTS_CHANNEL = 'aw:run:events:'
const CANCEL_CHANNEL = 'aw:run:cancel'

/** See the module comment. */
export class RunBus {
  readonly #origin = randomUUID()
  readonly #listeners = new Map<number, Set<Listener>>()
  /** The Redis subscription of each followed run's channel, settled (true once live, false when it did not take). */
  readonly #channels = new Map<number, Promise<boolean>>()
  /** Followed runs whose Redis subscription is live. */
  readonly #subscribed = new Set<number>()
  /** The one Redis listener of each followed run's channel (node-redis keeps a listener once). */
  readonly #handlers = new Map<number, (raw: string) => void>()
  readonly #cancelHandlers = new Set<(runId: number) => void>()
  readonly #redis: RedisConnection | undefined
  readonly #log: CacheLog
  #subscriber: RedisClientType | undefined

  private constructor(redis: RedisConnection | undefined, log: CacheLog) {
    this.#redis = redis
    this.#log = log
  }

  /**
   * Opens the bus; with `redis`, a connection of its own subscribes to the cancel channel (and
   * later to the channels of followed runs).
   * @throws when the subscriber cannot connect or subscribe within its deadlines.
   */
  static async create(options: { redis?: RedisConnection; log: CacheLog }): Promise<RunBus> {
    const bus = new RunBus(options.redis, options.log)
    if (options.redis) {
      const subscriber = await options.redis.subscriber('run bus')
      try {
        await withDeadline(
          subscriber.subscribe(CANCEL_CHANNEL, (raw) => bus.#receiveCancel(raw)),
          REDIS_COMMAND_TIMEOUT_MS,
          'run bus SUBSCRIBE',
        )
      } catch (error) {
        await closeClient(subscriber)
        throw error
      }
      // node-redis subscribes again to what had taken; the runs whose subscription had not are ours to redo.
      subscriber.on('ready', () => bus.#resubscribe())
      subscriber.on('error', () => {
        if (!subscriber.isReady) bus.#subscribed.clear()
      })
      bus.#subscriber = subscriber
    }
    return bus
  }

  /**
   * Whether events of run `runId` published in any process reach this one's listeners as they
   * are stored: always without Redis (one process); with it, while Redis is up and the run's
   * subscription is live. Followers poll the log while it is false.
   */
  isLive(runId: number): boolean {
    if (!this.#redis) return true
    return this.#redis.up && this.#subscriber?.isReady === true && this.#subscribed.has(runId)
  }

  /**
   * Calls `listener` with every event of run `runId` published from now on (in this process and,
   * with Redis, in every other while {@link isLive}). Resolves once the subscription is live or
   * has failed (within the command deadline; never rejects); the returned function ends it.
   */
  async subscribe(runId: number, listener: Listener): Promise<() => Promise<void>> {
    let set = this.#listeners.get(runId)
    const first = !set
    if (!set) {
      set = new Set()
      this.#listeners.set(runId, set)
    }
    set.add(listener)
    // A second follower that arrives while the first subscription is under way waits for it too.
    if (first) this.#subscribeChannel(runId)
    await this.#channels.get(runId)
    return async () => {
      const current = this.#listeners.get(runId)
      if (!current) return
      current.delete(listener)
      if (current.size > 0) return
      this.#listeners.delete(runId)
      this.#channels.delete(runId)
      this.#subscribed.delete(runId)
      this.#handlers.delete(runId)
      if (this.#subscriber?.isReady) {
        await withDeadline(this.#subscriber.unsubscribe(EVENTS_CHANNEL + runId), REDIS_COMMAND_TIMEOUT_MS, 'run bus UNSUBSCRIBE').catch(
          (error: unknown) => this.#log.warn({ err: error }, 'run bus unsubscribe failed'),
        )
      }
    }
  }

  /**
   * Delivers stored events to the followers of run `runId`, here and (with Redis) elsewhere; never
   * throws. A final event among them counts its run in `runs_total` (./run-metrics.ts).
   */
  publish(runId: number, events: RunEventRecord[]): void {
    if (events.length === 0) return
    countRunEndings(events)
    this.#deliver(runId, events)
    this.#redis
      ?.call((client) => client.publish(EVENTS_CHANNEL + runId, JSON.stringify({ origin: this.#origin, events })))
      .catch((error: unknown) =>
        logFailure(this.#log, error, { run_id: runId }, 'run events not published: followers elsewhere poll the log'),
      )
  }

  /** Registers what to do when any process asks to cancel a run (the executor aborts it if it runs here). */
  onCancel(handler: (runId: number) => void): void {
    this.#cancelHandlers.add(handler)
  }

  /** Asks every process (this one included) to stop run `runId`; a failed publication is logged, not thrown. */
  async cancel(runId: number): Promise<void> {
    for (const handler of this.#cancelHandlers) handler(runId)
    await this.#redis
      ?.call((client) => client.publish(CANCEL_CHANNEL, JSON.stringify({ origin: this.#origin, run_id: runId })))
      .catch((error: unknown) =>
        logFailure(this.#log, error, { run_id: runId }, 'run cancel not published: the executor notices the canceled run when it finishes'),
      )
  }

  /** Closes the subscriber connection. Never throws. */
  async close(): Promise<void> {
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    this.#listeners.clear()
    this.#channels.clear()
    this.#subscribed.clear()
    this.#handlers.clear()
    if (subscriber) await closeClient(subscriber)
  }

  /** Subscribes to run `runId`'s channel when the subscriber is up; records in {@link #channels} how it went. */
  #subscribeChannel(runId: number): void {
    const subscriber = this.#subscriber
    if (!subscriber?.isReady) {
      this.#channels.set(runId, Promise.resolve(false))
      return
    }
    let handler = this.#handlers.get(runId)
    if (!handler) {
      const receive = (raw: string) => this.#receiveEvents(runId, raw)
      this.#handlers.set(runId, receive)
      handler = receive
    }
    const done = withDeadline(subscriber.subscribe(EVENTS_CHANNEL + runId, handler), REDIS_COMMAND_TIMEOUT_MS, 'run bus SUBSCRIBE').then(
      () => {
        if (this.#listeners.has(runId)) this.#subscribed.add(runId)
        return true
      },
      (error: unknown) => {
        this.#log.warn({ err: error, run_id: runId }, 'run events not subscribed: the follower polls the log')
        return false
      },
    )
    this.#channels.set(runId, done)
  }

  /** The subscriber is back: node-redis has subscribed again to every channel that had taken. */
  #resubscribe(): void {
    for (const runId of this.#listeners.keys()) {
      if (this.#handlers.has(runId) && this.#subscriber?.getPubSubListeners('CHANNELS').has(EVENTS_CHANNEL + runId)) {
        this.#subscribed.add(runId)
      } else {
        this.#subscribeChannel(runId)
      }
    }
  }

  #deliver(runId: number, events: RunEventRecord[]): void {
    for (const listener of this.#listeners.get(runId) ?? []) listener(events)
  }

  #receiveEvents(runId: number, raw: string): void {
    const message = parseMessage(raw)
    if (!message || message.origin === this.#origin) return
    if (isEventList(message.events)) this.#deliver(runId, message.events)
  }

  #receiveCancel(raw: string): void {
    const message = parseMessage(raw)
    if (!message || message.origin === this.#origin || typeof message.run_id !== 'number') return
    for (const handler of this.#cancelHandlers) handler(message.run_id)
  }
}

/** A refused call (Redis known unavailable, already logged by the connection) at debug level, any other failure as a warning. */
function logFailure(log: CacheLog, error: unknown, fields: object, message: string): void {
  if (error instanceof RedisUnavailableError) log.debug({ err: error, ...fields }, message)
  else log.warn({ err: error, ...fields }, message)
}

const isEventList = (value: unknown): value is RunEventRecord[] =>
  Array.isArray(value) && value.every((event) => isRecord(event) && typeof event.seq === 'number' && typeof event.type === 'string')

function parseMessage(raw: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(raw)
    return isRecord(value) ? value : null
  } catch {
    return null
  }
}
