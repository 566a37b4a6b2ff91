/**
 * `workflow_executions_total{status}` (docs/operations.md, "Metrics"): workflow executions that
 * reached a final status (`succeeded`, `failed`, `canceled`), counted once each, in the process
 * that stored the ending:
 *
 * - an execution that ran to its end, as its end is stored (./store.ts, `settle`);
 * - a cancel, as the execution is marked `canceled` (./workflow-executions.service.ts); the
 *   executor's own `canceled` result that follows is not counted again;
 * - an execution whose process died, as the sweep fails it `abandoned` (./engine.ts).
 *
 * An execution handed back to the queue at shutdown has not ended: it is counted where it
 * resumes and ends. One canceled at the very moment it finished counts under both statuses
 * (the cancel wins in the database).
 */
import { counter } from '../platform/prometheus.ts'

/** The final statuses of an execution. */
export type FinalStatus = 'succeeded' | 'failed' | 'canceled'

const executions = counter(
  {
    name: 'workflow_executions_total',
    help: 'Workflow executions that reached a final status, by status (succeeded, failed, canceled)',
    labelNames: ['status'] as const,
  },
  { label: 'status', values: ['succeeded', 'failed', 'canceled'] satisfies FinalStatus[] },
)

/** Counts `count` executions that ended with `status`. */
export function countExecutionEnds(status: FinalStatus, count = 1): void {
  if (count > 0) executions.inc({ status }, count)
}
