/**
 * The one scheduler of a process (docs/operations.md, "Scheduling"): everything that comes due
 * at a stored time (command room tasks, workflow schedule triggers) is fired from here, by the
 * sources the modules register ({@link DueScheduler.register}); the scheduler knows none of them.
 *
 * A source keeps its own due times in its own table and fires them itself, exactly once per due
 * time (a unique key on the thing and its due time, rows taken `for update skip locked`); the
 * scheduler only decides when to ask. It sleeps until the earliest due time any source reported,
 * is woken earlier by {@link DueScheduler.wake} (a due time stored in this process), and looks
 * again at least every {@link LOOK_MS} for due times stored through other processes. An idle look
 * is one cheap statement per source.
 */
import type { Logger } from './logger.ts'

/**
 * Longest wait between two looks, in milliseconds: how late a due time stored through another
 * process may be noticed at most.
 */
export const LOOK_MS = 2_000

/** Something with due times (a module's table of them). */
export interface DueSource {
  /** Names the source in logs. */
  readonly name: string
  /** The earliest due time it holds, past or future; null when it holds none. */
  earliestDue(): Promise<Date | null>
  /**
   * Fires everything due at `now` (records each due time once, hands the work to the durable
   * queue) and moves its due times on. Answers how many due times it fired.
   */
  fireDue(now: Date): Promise<number>
}

/** See the module comment. */
export class DueScheduler {
  readonly #sources: DueSource[] = []
  #timer: NodeJS.Timeout | undefined
  /** When the pending look runs (epoch milliseconds), if one is pending. */
  #wakeAt: number | undefined
  #looking: Promise<unknown> | undefined
  /** The earliest due time woken for while a look was under way (epoch milliseconds): the next look is then at the latest. */
  #wokenDuringLook: number | undefined
  #started = false
  #closed = false

  constructor(private readonly log: Logger) {}

  /**
   * Adds a source; register every source before {@link start}.
   * @throws Error when a source of that name is registered already.
   */
  register(source: DueSource): void {
    if (this.#sources.some((known) => known.name === source.name)) throw new Error(`Due source "${source.name}" is registered already`)
    this.#sources.push(source)
  }

  /** Starts looking in this process (one that works the queue). Later calls do nothing. */
  start(): void {
    if (this.#started || this.#closed) return
    this.#started = true
    this.#wakeIn(0)
  }

  /**
   * Tells a started scheduler that something is now due at `at` (stored or changed in this
   * process), so it looks then rather than at its next look; a no-op in a process that does not
   * schedule, or for null. One look runs at a time: a wake during a look only moves the look after
   * it earlier, so a burst of notifications during a long look costs one more look, not one each
   * beside it doing the same work.
   */
  wake(at: Date | null): void {
    if (!this.#started || this.#closed || !at) return
    if (this.#looking) {
      this.#wokenDuringLook = Math.min(this.#wokenDuringLook ?? Infinity, at.getTime())
      return
    }
    const delay = Math.max(0, at.getTime() - Date.now())
    if (this.#wakeAt === undefined || Date.now() + delay < this.#wakeAt) this.#wakeIn(delay)
  }

  /**
   * Fires every source's due times at `now` (default: this process's clock). Answers how many due
   * times were fired. A failing source is logged and does not stop the others.
   */
  async fireDue(now: Date = new Date()): Promise<number> {
    let fired = 0
    for (const source of this.#sources) {
      fired += await source.fireDue(now).catch((error: unknown) => {
        this.log.warn({ err: error, source: source.name }, 'firing due times failed')
        return 0
      })
    }
    return fired
  }

  /** Stops looking, waiting for a look under way. */
  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    await this.#looking
  }

  #wakeIn(delayMs: number): void {
    clearTimeout(this.#timer)
    this.#wakeAt = Date.now() + delayMs
    this.#timer = setTimeout(() => void this.#lookAndWait(), delayMs)
    this.#timer.unref()
  }

  /** One look (firing what is due), then a wait until the earliest due time or the next look. */
  async #lookAndWait(): Promise<void> {
    this.#wakeAt = undefined
    if (this.#closed) return
    let delay = LOOK_MS
    this.#looking = (async () => {
      let at = await this.#earliestDue()
      if (at !== null && at.getTime() <= Date.now()) {
        await this.fireDue()
        at = await this.#earliestDue()
      }
      if (at !== null) delay = Math.min(LOOK_MS, Math.max(0, at.getTime() - Date.now()))
    })().catch((error: unknown) => this.log.warn({ err: error }, 'scheduler look failed'))
    await this.#looking
    this.#looking = undefined
    if (this.#closed) return
    // A wake that came during the look may want the next one earlier.
    if (this.#wokenDuringLook !== undefined) {
      delay = Math.min(delay, Math.max(0, this.#wokenDuringLook - Date.now()))
      this.#wokenDuringLook = undefined
    }
    if (this.#wakeAt === undefined || Date.now() + delay < this.#wakeAt) this.#wakeIn(delay)
  }

  /** The earliest due time over every source (a source that cannot answer counts as none). */
  async #earliestDue(): Promise<Date | null> {
    let earliest: Date | null = null
    for (const source of this.#sources) {
      const at = await source.earliestDue().catch((error: unknown) => {
        this.log.warn({ err: error, source: source.name }, 'reading the earliest due time failed')
        return null
      })
      if (at && (!earliest || at < earliest)) earliest = at
    }
    return earliest
  }
}
