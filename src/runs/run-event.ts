/**
 * One stored event of a run as followers receive it: the data of the `runs.events` subscription
 * (docs/api/runs.md). It imports nothing, so a front end's declarations of that subscription load
 * no zod or server types (docs/api/clients.md).
 */
export interface RunEventRecord {
  /** Sequence number from 1 per run, no gaps: the SSE id and the tRPC tracked id. */
  seq: number
  type: string
  data: unknown
  /** ISO 8601 UTC. */
  created_at: string
}
