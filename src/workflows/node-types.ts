/**
 * The node types a workflow may use (docs/api/workflows.md) and their description for
 * editors and for `GET /api/v1/workflow-node-types`. Each type lives in ./nodes; adding one is a
 * line in {@link NODE_TYPES}.
 */
import { z } from 'zod'
import { ifNode, switchNode } from './nodes/branching.ts'
import { httpRequest } from './nodes/http-request.ts'
import { mergeNode } from './nodes/merge.ts'
import { respondToWebhook } from './nodes/respond-to-webhook.ts'
import { runAgentNode, runPromptNode } from './nodes/runs.ts'
import { scheduleTrigger } from './nodes/schedule-trigger.ts'
import { setNode } from './nodes/set.ts'
import { manualTrigger, webhookTrigger } from './nodes/triggers.ts'
import { waitNode } from './nodes/wait.ts'
import { isRecord } from '../access/wire.ts'
import type { GraphNode, NodeType } from './types.ts'

/** Every node type by its `type` name, in the order editors list them (triggers first). */
export const NODE_TYPES: ReadonlyMap<string, NodeType> = new Map(
  [
    webhookTrigger,
    manualTrigger,
    scheduleTrigger,
    httpRequest,
    setNode,
    ifNode,
    switchNode,
    mergeNode,
    runPromptNode,
    runAgentNode,
    respondToWebhook,
    waitNode,
  ].map((type): [string, NodeType] => [type.type, type]),
)

/** The node type named `type`, or undefined for an unknown name. */
export function nodeType(type: string): NodeType | undefined {
  return NODE_TYPES.get(type)
}

/** The first trigger node of a graph's nodes (a saved graph has exactly one), or undefined. */
export function triggerOf(nodes: readonly unknown[]): GraphNode | undefined {
  return nodes.find((node): node is GraphNode => isRecord(node) && typeof node.type === 'string' && nodeType(node.type)?.kind === 'trigger')
}

/** Types whose output handles depend on their parameters (a switch's cases). */
const DYNAMIC_OUTPUTS: ReadonlySet<string> = new Set(['switch'])

/** One node type as `GET /api/v1/workflow-node-types` describes it. */
export interface NodeTypeDescription {
  type: string
  label: string
  description: string
  kind: 'trigger' | 'action'
  /** JSON Schema (draft 2020-12) of the parameters as saved: expression-capable fields accept `"=..."` strings too. */
  parameters: Record<string, unknown>
  /** The output handles edges name in `source_handle`; null: one unnamed output; `"dynamic"`: set by the parameters. */
  outputs: string[] | 'dynamic' | null
  /** Retry used when a node sets none; null: no retry. */
  default_retry: { max_attempts: number; delay_ms: number } | null
}

let described: NodeTypeDescription[] | undefined

/**
 * Every node type with its parameter schema as JSON Schema (from `z.toJSONSchema`, the input side:
 * defaults shown, optional members optional). Computed once per process.
 */
export function describeNodeTypes(): NodeTypeDescription[] {
  described ??= [...NODE_TYPES.values()].map((type) => ({
    type: type.type,
    label: type.label,
    description: type.description,
    kind: type.kind,
    parameters: z.toJSONSchema(type.parameters, { io: 'input', unrepresentable: 'any' }),
    // Fixed handles do not depend on the parameters, so none are passed.
    outputs: DYNAMIC_OUTPUTS.has(type.type) ? 'dynamic' : type.outputs(undefined),
    default_retry: type.defaultRetry ?? null,
  }))
  return described
}
