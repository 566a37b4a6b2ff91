/**
 * What the runs capability adds to the service context's dependencies (src/context.ts,
 * `ServiceDeps`), by declaration merging: the run manager's port, and the linked workflows a run
 * offers as tools, which the workflows capability implements (src/workflows/linked-workflows.ts)
 * and the runtime hands over (src/app.ts), so runs never import workflows.
 */
import type { ResourceCtx } from '../context.ts'
import type { SqlFragment } from '../platform/sql.ts'
import type { RunManager } from './run-manager.ts'
import type { WorkflowToolBinding } from './workflow-tools.ts'

/** What services call on the runs executing in this process (./run-manager.ts). */
export type RunsPort = Pick<RunManager, 'bus' | 'start' | 'track' | 'cancel' | 'requestResume' | 'requestDispatch'>

/** An agent's linked workflows as tools of its runs (docs/api/runs.md, "Linked workflows"). */
export interface LinkedWorkflowsPort {
  /**
   * A subquery answering, as a JSON array, the workflows linked to the agent whose id is the SQL
   * `agentId` (a column or a `?`) that the caller may run; {@link bindings} reads what it answers.
   */
  sql(ctx: ResourceCtx, agentId: string): SqlFragment
  /** {@link sql} for the workflows of an agent version's snapshot: `workflows` is the SQL jsonb expression of its `workflows` (docs/api/versions.md). */
  snapshotSql(ctx: ResourceCtx, workflows: string): SqlFragment
  /**
   * The tools of the rows {@link sql} read, named clear of `o.taken`; none once a run is too many
   * linked-workflow calls deep (`o.toolDepth`). Each binding's `run` acts as the caller of `ctx`.
   */
  bindings(ctx: ResourceCtx, rows: unknown, o: { taken: ReadonlySet<string>; toolDepth: number }): WorkflowToolBinding[]
}

declare module '../context.ts' {
  interface ServiceDeps {
    runs: RunsPort
    linkedWorkflows: LinkedWorkflowsPort
  }
}
