/**
 * The workflow engine of one process (issue 6 item 3; API.md sections 1 and 7). SKELETON: the
 * public methods are the contract other modules code against; bodies land with the executor.
 */
import type { FastifyBaseLogger as Logger } from 'fastify'
import type { Config } from '../config.ts'
import type { Orm } from '../db.ts'
import type { ReadCache } from '../services/read-cache.ts'
import type { ExecutionRecord } from './store.ts'

/** See the module comment. */
export class WorkflowEngine {
  private constructor(
    readonly orm: Orm,
    readonly config: Config,
    readonly log: Logger,
    readonly readCache: ReadCache,
  ) {}

  /** Opens the queue (and works it unless `worker` is false). */
  static async create(o: { orm: Orm; config: Config; log: Logger; readCache: ReadCache; worker: boolean }): Promise<WorkflowEngine> {
    return new WorkflowEngine(o.orm, o.config, o.log, o.readCache)
  }

  /** Hands a `queued` execution (already stored, see store.ts) to the durable queue; any worker runs it. */
  async enqueue(record: ExecutionRecord): Promise<void> {
    void record
  }

  /** Stops execution `executionId` if it runs in this process (its row was already marked `canceled`). */
  abort(executionId: number): void {
    void executionId
  }

  /** Registers, updates or removes the schedule of a workflow after it was saved or deleted. */
  async syncSchedule(workflowId: number): Promise<void> {
    void workflowId
  }

  /** Waits for executions of this process, then stops the queue. */
  async close(timeoutMs: number): Promise<void> {
    void timeoutMs
  }
}
