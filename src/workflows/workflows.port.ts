/**
 * What the workflows capability adds to the service context's dependencies (src/context.ts,
 * `ServiceDeps`), by declaration merging: this process's workflow engine, as far as services use it.
 */
import type { WorkflowEngine } from './engine.ts'

/** What services call on this process's workflow engine (./engine.ts). */
export type WorkflowsPort = Pick<WorkflowEngine, 'runHere' | 'runQueued' | 'abort' | 'syncSchedule' | 'webhooks'>

declare module '../context.ts' {
  interface ServiceDeps {
    workflows: WorkflowsPort
  }
}
