/**
 * `POST /api/v1/workflows/generate` (docs/api/workflows.md, "Generating"): asks a language model
 * of the request's workspace for a workflow graph from a description, checks it like any saved
 * graph, and stores it as a workflow of the caller.
 *
 * - Model: `model` (a catalog slug or uuid) or the workspace's default, resolved like a run's
 *   (src/models/registry.ts); errors name `model`. The built-in local test model does not think, so
 *   it cannot design a graph: asking it is a 400 naming `model`.
 * - Asking: src/models/structured-generate.ts, the mechanism agent generation uses too: structured
 *   output with the JSON Schema of `{name, description, nodes, edges}`, a system prompt listing
 *   every node type with its parameter JSON Schema (`describeNodeTypes()`), one repair.
 * - Checks: the request schemas of a workflow's graph (`WorkflowNodes`, `WorkflowEdges`), its
 *   size and `validateGraph`. When the repaired answer still fails, a 400 naming `description`
 *   with the problems in the message: the description is what the caller can change.
 * - Storing: through `create` of ./workflows.service.ts, so a generated workflow is an ordinary
 *   one (private, inactive, owned by the caller, in the request's workspace).
 * - Faults of the model's provider: 502 (`UpstreamError`), 504 when it does not answer within
 *   `LLM_TIMEOUT_MS` (`UpstreamTimeoutError`), as for thread names.
 */
import { z } from 'zod'
import { ValidationError } from '../platform/errors.ts'
import { resolveModel } from '../models/index.ts'
import { checkWith, costOf, generateStructured, issueLines, type Checked } from '../models/index.ts'
import { meteredCall, spendScopeOf, type CallTokens } from '../usage/index.ts'
import type { TGenerateWorkflowInput, TWorkflow } from './workflow.schema.ts'
import { jsonBytes, storableText, text } from '../access/wire.ts'
import { MAX_GRAPH_BYTES, WorkflowEdges, WorkflowNodes } from './workflow-graph.schema.ts'
import { validateGraph } from './graph.ts'
import { describeNodeTypes } from './node-types.ts'
import { create } from './workflows.service.ts'
import type { ResourceCtx } from '../context.ts'

/** Most output tokens asked of the model for one graph. */
const MAX_OUTPUT_TOKENS = 16_384
/** Longest stored name and description (the limits of `POST /api/v1/workflows`). */
const NAME_MAX = 255
const DESCRIPTION_MAX = 2_000

/** The instructions before the node type catalog. */
const INSTRUCTIONS = `You design workflows for an automation service. A workflow is a directed acyclic graph of nodes joined by edges.
Answer with exactly one JSON object and nothing else, of this shape:
{"name": "short name", "description": "one or two sentences", "nodes": [...], "edges": [...]}
- A node is {"id": "unique id", "type": "one of the node types below", "name": "label", "parameters": {...}, "position": {"x": 0, "y": 0}}; its parameters must satisfy the JSON Schema of its type.
- An edge is {"id": "unique id", "source": "node id", "target": "node id"}; an edge leaving a branching node names the branch in "source_handle" (one of that node's outputs).
- Exactly one trigger node starts the graph; every other node is reached from it; no cycles.
- A parameter string that starts with "=" is a JSONata expression over the node's input.
- Place nodes left to right, about 250 apart in x.
The node types, as JSON (type, description, kind, parameter JSON Schema):`

/** The system prompt, built once per process from the node type catalog. */
let systemPrompt: string | null = null
function system(): string {
  systemPrompt ??= `${INSTRUCTIONS}\n${JSON.stringify(describeNodeTypes())}`
  return systemPrompt
}

/** What the model is asked for (the graph fields of `POST /api/v1/workflows`), as its JSON Schema shows it. */
const GraphAnswer = z.object({ name: text(NAME_MAX, 1), description: text(DESCRIPTION_MAX), nodes: WorkflowNodes, edges: WorkflowEdges })

/**
 * The model's answer as the request schemas check it; `name` and `description` are only hints
 * (a poor one falls back to the description), so they never cost a repair.
 */
const GeneratedGraph = z.object({
  name: z.unknown().optional(),
  description: z.unknown().optional(),
  nodes: WorkflowNodes,
  edges: WorkflowEdges,
})
type TGeneratedGraph = z.infer<typeof GeneratedGraph>

/**
 * Checks a parsed answer (see the module comment): the graph, or every problem found, each with
 * its path into `{nodes, edges}`.
 */
export function checkGraph(value: unknown): Checked<TGeneratedGraph> {
  const checked = checkWith(GeneratedGraph, value)
  if (!checked.ok) return checked
  const { nodes, edges } = checked.value
  if (jsonBytes({ nodes, edges }) > MAX_GRAPH_BYTES) {
    return { ok: false, issues: [{ path: [], message: `The graph is larger than ${MAX_GRAPH_BYTES} bytes` }] }
  }
  const issues = validateGraph(nodes, edges)
  return issues.length ? { ok: false, issues } : checked
}

/** A non-blank string of at most `max` characters, storable, or null. */
function textOf(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null
  const cleaned = storableText(value).replace(/\s+/g, ' ').trim()
  return cleaned ? Array.from(cleaned).slice(0, max).join('').trim() : null
}

/**
 * Generates and stores a workflow from `input.description` (module comment); answers 201's
 * `{data: Workflow}`.
 * @throws ValidationError naming `model` (unknown, without a credential, or the local test
 *   model) or `description` (the model's graph failed its checks twice, the problems in the
 *   message); UpstreamError (502) / UpstreamTimeoutError (504) when the provider fails, and the
 *   504 also once `signal` aborted (the client disconnected: no one reads the answer, and nothing
 *   is stored).
 */
export async function generateWorkflow(
  ctx: ResourceCtx,
  input: TGenerateWorkflowInput,
  signal?: AbortSignal,
): Promise<{ data: TWorkflow }> {
  const model = await resolveModel(
    { em: ctx.em, config: ctx.config },
    { workspaceId: ctx.workspace.workspace.id, userId: ctx.auth.user.id, slug: input.model ?? null, field: ['model'] },
  )
  const metered = { slug: model.llm.slug, costOf: (tokens: CallTokens) => costOf(model.llm, tokens) }
  const checked = await meteredCall(ctx, spendScopeOf(ctx, null), metered, (onUsage) =>
    generateStructured(model, ctx.config, {
      onUsage,
      name: 'workflow',
      shape: GraphAnswer,
      system: system(),
      prompt: input.name ? `Workflow name: ${input.name}\n\n${input.description}` : input.description,
      check: checkGraph,
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      task: 'design a workflow',
      modelField: ['model'],
      signal,
    }),
  )
  if (!checked.ok) {
    throw new ValidationError(
      ['description'],
      `The model did not produce a valid workflow for this description:\n${issueLines(checked.issues)}`,
    )
  }
  const graph = checked.value
  return create(ctx, {
    name: textOf(input.name, NAME_MAX) ?? textOf(graph.name, NAME_MAX) ?? textOf(input.description, 60) ?? 'Generated workflow',
    description: textOf(graph.description, DESCRIPTION_MAX) ?? textOf(input.description, DESCRIPTION_MAX) ?? '',
    nodes: graph.nodes,
    edges: graph.edges,
  })
}
