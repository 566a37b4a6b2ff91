/**
 * The process's Redis connection and the deadlines on every call to it (docs/operations.md,
 * "Redis outages"). Redis only speeds things up and carries messages here; the database is the
 * truth, so a call that cannot be made in time is given up and its caller falls back.
 *
 * - **Connecting**: each attempt gives up after {@link REDIS_CONNECT_TIMEOUT_MS}; a lost connection
 *   is retried by the client itself (its `reconnectStrategy`: exponential, at most
 *   {@link REDIS_RECONNECT_MAX_DELAY_MS} apart, forever). At start-up, {@link REDIS_STARTUP_ATTEMPTS}
 *   failed attempts fail the start, as an unreachable database does.
 * - **Commands**: the client's offline queue is off, so a command issued while the connection is
 *   down fails at once instead of waiting for the reconnection, and a command waits at most
 *   {@link REDIS_COMMAND_TIMEOUT_MS} to be written (the client's `commandOptions.timeout`). The
 *   client puts no deadline on the reply itself, so {@link RedisConnection.call} does: a call
 *   that has no answer within {@link REDIS_COMMAND_TIMEOUT_MS} fails (Redis connected but
 *   stalled); the command is not taken back.
 * - **Circuit**: {@link RedisConnection.call} refuses at once (a {@link RedisUnavailableError},
 *   no network) while the connection is down or after {@link REDIS_CIRCUIT_FAILURES} calls in a
 *   row have failed. A heartbeat (a PING every {@link REDIS_PING_INTERVAL_MS}, under the same
 *   deadline; the client's own `pingInterval` has none) counts like a call: its first success,
 *   or a reconnection, closes the circuit again, and its failures open it without any traffic.
 * - **Health**: {@link RedisConnection.up} is true while connected and the latest call or
 *   heartbeat succeeded; {@link RedisConnection.onChange} tells the per-process caches, which
 *   serve nothing while it is false (src/platform/subscriber.ts).
 *
 * Subscriptions need connections of their own ({@link RedisConnection.subscriber}), with the
 * same deadlines. Log lines carry the error, never the URL (it may hold a password).
 */
import { createClient, type RedisClientType } from '@keyv/redis'
import KeyvRedis from '@keyv/redis'

/** How long one connection attempt may take (TCP and TLS handshake), in milliseconds. */
export const REDIS_CONNECT_TIMEOUT_MS = 1_000
/** How long one call (one command, or the few of a transaction) may wait for its answer, in milliseconds. */
export const REDIS_COMMAND_TIMEOUT_MS = 300
/** Interval of the heartbeat PING on the main connection, in milliseconds. */
export const REDIS_PING_INTERVAL_MS = 1_000
/** Failed calls in a row after which calls are refused at once until a heartbeat succeeds. */
export const REDIS_CIRCUIT_FAILURES = 3
/** Longest wait between two reconnection attempts, in milliseconds (the first waits 50 ms). */
export const REDIS_RECONNECT_MAX_DELAY_MS = 1_000
/** Connection attempts at start-up before the start fails. */
export const REDIS_STARTUP_ATTEMPTS = 10

/** What the connection writes to the process logger (pino's methods). */
export interface RedisLog {
  debug: (object: object, message: string) => void
  info: (object: object, message: string) => void
  warn: (object: object, message: string) => void
  error: (object: object, message: string) => void
}

/** A call refused without trying: the connection is down or the circuit is open. */
export class RedisUnavailableError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RedisUnavailableError'
  }
}

/**
 * `promise`, or a rejection with `Error(what + ' timed out after ' + ms + ' ms')` once `ms` have
 * passed: the deadline of {@link RedisConnection.call}, and of the commands the client puts none
 * on (SUBSCRIBE, UNSUBSCRIBE, QUIT). The promise itself is not cancelled. The rejection waits for
 * the I/O of the event loop turn in which the deadline passes, so an answer that had already
 * arrived (a process that could not run for a moment: a busy event loop, a busy machine) still
 * wins over it.
 */
export async function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new Error(`${what} timed out after ${ms} ms`))), ms)
  })
  try {
    return await Promise.race([promise, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/** A node-redis client with the deadlines of the module comment, not yet connected. */
function newClient(url: string): RedisClientType {
  let connected = false
  const client = createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: REDIS_COMMAND_TIMEOUT_MS },
    socket: {
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      // `retries` counts the failed attempts since the connection was last up. Before it ever was
      // (start-up), returning the error ends the attempts and makes connect() reject.
      reconnectStrategy: (retries, cause) =>
        !connected && retries + 1 >= REDIS_STARTUP_ATTEMPTS
          ? cause
          : Math.min(50 * 2 ** retries, REDIS_RECONNECT_MAX_DELAY_MS) + Math.floor(Math.random() * 50),
    },
  })
  client.once('ready', () => (connected = true))
  return client as RedisClientType
}

/** Connects `client`, or destroys it and throws when it cannot. */
async function connect(client: RedisClientType): Promise<void> {
  try {
    await client.connect()
  } catch (error) {
    if (client.isOpen) client.destroy()
    throw new Error('Redis cannot be reached (REDIS_URL)', { cause: error })
  }
}

/**
 * Closes `client`: a polite QUIT while it answers, else at once (pending commands are rejected).
 * Never throws.
 */
export async function closeClient(client: RedisClientType, answering = client.isReady): Promise<void> {
  if (!client.isOpen) return
  if (answering) {
    try {
      await withDeadline(client.quit(), REDIS_COMMAND_TIMEOUT_MS, 'QUIT')
      return
    } catch {
      // Not answering after all; the socket goes below.
    }
  }
  try {
    client.destroy()
  } catch {
    // Already closing.
  }
}

/** See the module comment. One per process (per runtime), made by {@link RedisConnection.connect}. */
export class RedisConnection {
  /** The main connection: commands and PUBLISH. Prefer {@link call}, which knows the circuit. */
  readonly client: RedisClientType
  readonly #url: string
  readonly #log: RedisLog
  readonly #listeners = new Set<(up: boolean) => void>()
  /** Failed calls (and heartbeats) in a row. */
  #failures = 0
  #up = false
  /** Set by {@link close}: the connection going away is not an outage. */
  #closing = false
  readonly #heartbeat: NodeJS.Timeout

  private constructor(url: string, log: RedisLog) {
    this.#url = url
    this.#log = log
    this.client = newClient(url)
    const client = this.client
    client.on('ready', () => {
      this.#failures = 0
      this.#update()
    })
    // A lost socket (the client reconnects by itself) or a reply it could not read.
    client.on('error', (error: unknown) => this.#update(error))
    this.#heartbeat = setInterval(() => void this.#beat(), REDIS_PING_INTERVAL_MS)
    this.#heartbeat.unref()
  }

  /**
   * Connects to `url` (`redis://` or `rediss://`, possibly with a password).
   * @param log the process logger; the URL never reaches it.
   * @throws Error when no connection can be made within {@link REDIS_STARTUP_ATTEMPTS} attempts.
   */
  static async connect(url: string, log: RedisLog): Promise<RedisConnection> {
    const connection = new RedisConnection(url, log)
    await connect(connection.client)
    return connection
  }

  /** True while connected and the latest call or heartbeat succeeded. */
  get up(): boolean {
    return this.#up
  }

  /** True while {@link call} refuses without trying: not connected, or too many failures in a row. */
  get circuitOpen(): boolean {
    return !this.client.isReady || this.#failures >= REDIS_CIRCUIT_FAILURES
  }

  /**
   * Runs `fn` with the main connection, counting its outcome for the circuit; gives up on it
   * after {@link REDIS_COMMAND_TIMEOUT_MS} (its commands are not taken back).
   * @throws RedisUnavailableError at once while {@link circuitOpen}; Error `Redis call timed out
   *   after … ms` past the deadline; else whatever `fn` throws (ClientOfflineError when the
   *   connection drops meanwhile, an error reply).
   */
  async call<T>(fn: (client: RedisClientType) => Promise<T>): Promise<T> {
    if (!this.client.isReady) throw new RedisUnavailableError('Redis is not connected')
    if (this.#failures >= REDIS_CIRCUIT_FAILURES) throw new RedisUnavailableError('Redis is not answering (circuit open)')
    let result: T
    try {
      result = await withDeadline(fn(this.client), REDIS_COMMAND_TIMEOUT_MS, 'Redis call')
    } catch (error) {
      this.#failed(error)
      throw error
    }
    this.#succeeded()
    return result
  }

  /**
   * PING through {@link call}, for the readiness probe.
   * @throws like {@link call}: at once while the circuit is open, else within the command deadline.
   */
  async ping(): Promise<void> {
    await this.call((client) => client.ping())
  }

  /** Calls `listener` with each change of {@link up}; the returned function stops it. */
  onChange(listener: (up: boolean) => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  /**
   * A new connection for SUBSCRIBE, with the same connection deadlines, connected. It does not
   * keep the process alive; its drops are logged under `label`; close it with {@link closeClient}.
   * @throws Error when it cannot connect (as {@link connect}).
   */
  async subscriber(label: string): Promise<RedisClientType> {
    const subscriber = newClient(this.#url)
    let wasReady = false
    subscriber.on('ready', () => {
      if (wasReady) this.#log.info({}, `${label} subscriber connected again`)
      wasReady = true
    })
    subscriber.on('error', (error: unknown) => this.#log.debug({ err: error }, `${label} subscriber error`))
    await connect(subscriber)
    subscriber.unref()
    return subscriber
  }

  /** A Keyv store on this connection whose reads and writes go through {@link call} (see {@link GuardedKeyvRedis}). */
  keyvStore(): GuardedKeyvRedis {
    return new GuardedKeyvRedis(this)
  }

  /** Stops the heartbeat and closes the main connection (subscribers close with their owners). Never throws. */
  async close(): Promise<void> {
    this.#closing = true
    clearInterval(this.#heartbeat)
    await closeClient(this.client, this.#up)
  }

  /** One heartbeat: a PING under the call deadline, past the circuit (it is what closes it). */
  async #beat(): Promise<void> {
    if (!this.client.isReady) return
    try {
      await withDeadline(this.client.ping(), REDIS_COMMAND_TIMEOUT_MS, 'Redis heartbeat PING')
    } catch (error) {
      this.#failed(error)
      return
    }
    this.#succeeded()
  }

  #succeeded(): void {
    this.#failures = 0
    this.#update()
  }

  #failed(error: unknown): void {
    if (error instanceof RedisUnavailableError) return
    this.#failures += 1
    if (this.#failures === REDIS_CIRCUIT_FAILURES) {
      this.#log.warn(
        { err: error },
        `redis circuit open: ${REDIS_CIRCUIT_FAILURES} calls failed in a row, calls are refused until a heartbeat succeeds`,
      )
    }
    this.#update(error)
  }

  #update(error?: unknown): void {
    if (this.#closing) return
    const up = this.client.isReady && this.#failures === 0
    if (up === this.#up) {
      if (error !== undefined) this.#log.debug({ err: error }, 'redis error')
      return
    }
    this.#up = up
    if (up) this.#log.info({}, 'redis available')
    else
      this.#log.warn(
        { err: error },
        'redis unavailable: caches serve nothing, rate limits count per process, run followers poll the database',
      )
    for (const listener of this.#listeners) {
      try {
        listener(up)
      } catch (cause) {
        this.#log.error({ err: cause }, 'redis state listener failed')
      }
    }
  }
}

/**
 * The metrics cache's Keyv store over Redis (src/trpc/cache.ts): `@keyv/redis` with every read
 * and write through {@link RedisConnection.call}, so the circuit applies and a failure reaches
 * Keyv, which answers a miss (a read) or false (a write) instead of waiting or throwing.
 */
export class GuardedKeyvRedis extends KeyvRedis<string> {
  readonly #connection: RedisConnection

  constructor(connection: RedisConnection) {
    super(connection.client, { throwOnErrors: true, throwOnConnectError: true })
    this.#connection = connection
  }

  override get<U = string>(key: string): Promise<U | undefined> {
    return this.#connection.call(() => super.get<U>(key))
  }

  override set(key: string, value: string, ttl?: number): Promise<void> {
    return this.#connection.call(() => super.set(key, value, ttl))
  }

  override has(key: string): Promise<boolean> {
    return this.#connection.call(() => super.has(key))
  }

  override delete(key: string): Promise<boolean> {
    return this.#connection.call(() => super.delete(key))
  }
}
