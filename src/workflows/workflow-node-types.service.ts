/**
 * The workflow node type catalogue (docs/api/workflows.md, "Graphs and node types"): every node
 * type the engine runs, with its parameters as JSON Schema. The same for every caller.
 */
import type { TWorkflowNodeTypeList } from './workflow-node-type.schema.ts'
import { describeNodeTypes } from './node-types.ts'

/** `GET /api/v1/workflow-node-types`: `{data: [...]}` in the registry's order. */
export function list(): TWorkflowNodeTypeList {
  return { data: describeNodeTypes() }
}
