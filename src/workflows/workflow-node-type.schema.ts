/**
 * Wire shape of the node type catalogue (docs/api/workflows.md):
 * `GET /api/v1/workflow-node-types` answers `{data: [WorkflowNodeType]}`, built by
 * `describeNodeTypes()` in src/workflows/node-types.ts.
 */
import { z } from 'zod'

/** One node type: its name, what it does, its parameters as JSON Schema, its output handles and default retry. */
export const WorkflowNodeType = z
  .object({
    type: z.string(),
    label: z.string(),
    description: z.string(),
    kind: z.enum(['trigger', 'action']),
    /** JSON Schema (draft 2020-12) of `parameters` as saved; expression-capable fields also accept `"=..."` strings. */
    parameters: z.record(z.string(), z.unknown()),
    /** Handles edges name in `source_handle`; null: one unnamed output; "dynamic": set by the parameters (a switch's cases). */
    outputs: z.union([z.array(z.string()), z.literal('dynamic')]).nullable(),
    /** Retry used when a node sets none: attempts in all and the first delay in milliseconds; null: none. */
    default_retry: z.object({ max_attempts: z.number().int(), delay_ms: z.number().int() }).nullable(),
  })
  .meta({ id: 'WorkflowNodeType' })
export type TWorkflowNodeType = z.infer<typeof WorkflowNodeType>

/** `GET /api/v1/workflow-node-types`: every node type, triggers first. */
export const WorkflowNodeTypeList = z.object({ data: z.array(WorkflowNodeType) })
export type TWorkflowNodeTypeList = z.infer<typeof WorkflowNodeTypeList>
