/**
 * Live delivery of run events and cancel requests between the process that executes a run and
 * the processes whose clients follow it (docs/api/runs.md).
 *
 * - The event log in `run_events` is the truth; the bus only wakes followers. An event is
 *   published after it is stored, so a follower that subscribes first and then reads the log
 *   misses nothing (src/llm/run-log.ts, `followRun`).
 * - In one process, listeners are called directly. With Redis, events are also published on
 *   `aw:run:events:<run id>` (a channel per run, subscribed only while someone follows it) and
 *   cancel requests on `aw:run:cancel`; each message carries the sender's `origin`, so a process
 *   skips its own.
 */
import type { RunEventRecord } from '../schemas/run.schema.ts'
import { randomUUID } from 'node:crypto'
import type { RedisClientType } from '@keyv/redis'
import type { CacheLog } from '../platform/subscriber.ts'
import { isRecord } from '../schemas/wire.ts'

type Listener = (events: RunEventRecord[]) => void

const EVENTS_CHANNEL = 'aw:run:events:'
const CANCEL_CHANNEL = 'aw:run:cancel'

/** See the module comment. */
export class RunBus {
  readonly #origin = randomUUID()
  readonly #listeners = new Map<number, Set<Listener>>()
  /** The Redis subscription of each followed run's channel, settled once it is live. */
  readonly #channels = new Map<number, Promise<unknown>>()
  readonly #cancelHandlers = new Set<(runId: number) => void>()
  readonly #redis: RedisClientType | undefined
  readonly #log: CacheLog
  #subscriber: RedisClientType | undefined

  private constructor(redis: RedisClientType | undefined, log: CacheLog) {
    this.#redis = redis
    this.#log = log
  }

  /**
   * Opens the bus; with `redis`, a duplicate connection subscribes to the cancel channel (and
   * later to the channels of followed runs).
   * @throws when the subscriber cannot connect.
   */
  static async create(options: { redis?: RedisClientType; log: CacheLog }): Promise<RunBus> {
    const bus = new RunBus(options.redis, options.log)
    if (options.redis) {
      const subscriber = options.redis.duplicate()
      subscriber.on('error', (error: unknown) => options.log.error({ err: error }, 'run bus subscriber error'))
      await subscriber.connect()
      await subscriber.subscribe(CANCEL_CHANNEL, (raw) => bus.#receiveCancel(raw))
      subscriber.unref()
      bus.#subscriber = subscriber
    }
    return bus
  }

  /**
   * Calls `listener` with every event of run `runId` published from now on (in this process and,
   * with Redis, in every other). Resolves once the subscription is live; the returned function
   * ends it.
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
    if (first && this.#subscriber?.isReady) {
      this.#channels.set(runId, this.#subscriber.subscribe(EVENTS_CHANNEL + runId, (raw) => this.#receiveEvents(runId, raw)))
    }
    await this.#channels.get(runId)
    return async () => {
      const current = this.#listeners.get(runId)
      if (!current) return
      current.delete(listener)
      if (current.size > 0) return
      this.#listeners.delete(runId)
      this.#channels.delete(runId)
      if (this.#subscriber?.isReady) {
        await this.#subscriber.unsubscribe(EVENTS_CHANNEL + runId).catch((error: unknown) => this.#log.warn({ err: error }, 'run bus unsubscribe failed'))
      }
    }
  }

  /** Delivers stored events to the followers of run `runId`, here and (with Redis) elsewhere. */
  publish(runId: number, events: RunEventRecord[]): void {
    if (events.length === 0) return
    this.#deliver(runId, events)
    if (this.#redis?.isReady) {
      this.#redis
        .publish(EVENTS_CHANNEL + runId, JSON.stringify({ origin: this.#origin, events }))
        .catch((error: unknown) => this.#log.warn({ err: error }, 'run events not published'))
    }
  }

  /** Registers what to do when any process asks to cancel a run (the executor aborts it if it runs here). */
  onCancel(handler: (runId: number) => void): void {
    this.#cancelHandlers.add(handler)
  }

  /** Asks every process (this one included) to stop run `runId`. */
  async cancel(runId: number): Promise<void> {
    for (const handler of this.#cancelHandlers) handler(runId)
    if (this.#redis?.isReady) {
      await this.#redis
        .publish(CANCEL_CHANNEL, JSON.stringify({ origin: this.#origin, run_id: runId }))
        .catch((error: unknown) => this.#log.warn({ err: error }, 'run cancel not published'))
    }
  }

  /** Closes the subscriber connection. */
  async close(): Promise<void> {
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    this.#listeners.clear()
    this.#channels.clear()
    if (subscriber?.isOpen) await subscriber.quit().catch((error: unknown) => this.#log.warn({ err: error }, 'could not close the run bus subscriber'))
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
