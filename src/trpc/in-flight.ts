/**
 * Procedure calls still running in this process. A client that disconnects does not stop its
 * call, and the HTTP server's close() only waits for open requests, so shutdown also waits here
 * before it closes the database (docs/operations.md, "Shutdown": in-flight work
 * finishes).
 */
export class InFlight {
  private count = 0
  private waiters: (() => void)[] = []

  /** Calls running now. */
  get active(): number {
    return this.count
  }

  /** Marks a call started. */
  enter(): void {
    this.count += 1
  }

  /** Marks a call finished (successfully or not). */
  leave(): void {
    this.count -= 1
    if (this.count === 0) for (const wake of this.waiters.splice(0)) wake()
  }

  /** Resolves once no call is running, or after `timeoutMs` milliseconds, whichever is first. */
  idle(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve()
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs)
      timer.unref()
      this.waiters.push(() => {
        clearTimeout(timer)
        resolve()
      })
    })
  }
}
