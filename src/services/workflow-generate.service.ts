/**
 * `POST /api/v1/workflows/generate` (docs/api/workflows.md, "Workflows as resources"): asks a
 * language model of the request's workspace for a workflow graph from a description, checks it
 * like any saved graph, and stores it as a workflow of the caller.
 *
 * - Model: `model` (a catalog slug or uuid) or the workspace's default, resolved like a run's
 *   (src/llm/registry.ts); errors name `model`. The built-in local test model does not think, so
 *   it cannot design a graph: asking it is a 400 naming `model`.
 * - Prompt: a system prompt listing every node type with its parameter JSON Schema
 *   (`describeNodeTypes()`) and asking for one JSON object `{name, description, nodes, edges}`.
 * - Checks: the answer is parsed (a Markdown code fence around it is tolerated), then checked
 *   with the request schemas of a workflow's graph (`WorkflowNodes`, `WorkflowEdges`), its size
 *   and `validateGraph`. When that fails the model is asked once more with the problems listed
 *   (a repair); a second failure is a 400 naming `description` with the problems in the message.
 * - Storing: through `create` of ./workflows.service.ts, so a generated workflow is an ordinary
 *   one (private, inactive, owned by the caller, in the request's workspace).
 * - Faults of the model's provider: 502 (`UpstreamError`), 504 when it does not answer within
 *   `LLM_TIMEOUT_MS` (`UpstreamTimeoutError`), as for thread names.
 */
import type { ModelMessage } from 'ai'
import { completeText } from '../llm/complete.ts'
import { z } from 'zod'
import { ValidationError } from '../platform/errors.ts'
import { resolveModel, type ResolvedModel } from '../llm/registry.ts'
import type { TGenerateWorkflowInput, TWorkflow } from '../schemas/workflow.schema.ts'
import { jsonBytes, storableText, storableValue } from '../schemas/wire.ts'
import { MAX_GRAPH_BYTES, WorkflowEdges, WorkflowNodes } from '../schemas/workflow-graph.schema.ts'
import { validateGraph, type GraphIssue } from '../workflow-engine/graph.ts'
import { describeNodeTypes } from '../workflow-engine/node-types.ts'
import { create } from './workflows.service.ts'
import type { ResourceCtx } from '../context.ts'

/** Most output tokens asked of the model for one graph. */
const MAX_OUTPUT_TOKENS = 16_384
/** Most problems listed to the model in a repair, and in the 400. */
const MAX_LISTED_ISSUES = 20
/** Longest earlier answer sent back in a repair, in characters. */
const MAX_ECHOED_ANSWER = 40_000
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

/** The model's answer as the request schemas check it; `name` and `description` are optional hints. */
const GeneratedGraph = z.object({
  name: z.unknown().optional(),
  description: z.unknown().optional(),
  nodes: WorkflowNodes,
  edges: WorkflowEdges,
})
type TGeneratedGraph = z.infer<typeof GeneratedGraph>

/** The JSON text of an answer: the body of its first Markdown code fence, else from the first `{` to the last `}`. */
export function answerJson(text: string): string {
  const fenced = /```[a-zA-Z]*\s*\n?([\s\S]*?)```/.exec(text)
  if (fenced) return fenced[1].trim()
  const start = text.indexOf('{')
  const end = text.lastIndexOf('}')
  return start >= 0 && end > start ? text.slice(start, end + 1) : text.trim()
}

/**
 * Parses and checks a model's answer (see the module comment): the graph, or every problem
 * found, each with its path into `{nodes, edges}`.
 */
export function checkAnswer(text: string): { graph: TGeneratedGraph; issues: [] } | { graph: null; issues: GraphIssue[] } {
  let value: unknown
  try {
    value = JSON.parse(answerJson(text))
  } catch {
    return { graph: null, issues: [{ path: [], message: 'The answer is not a JSON object' }] }
  }
  const parsed = GeneratedGraph.safeParse(storableValue(value))
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)),
      message: issue.message,
    }))
    return { graph: null, issues }
  }
  const { nodes, edges } = parsed.data
  if (jsonBytes({ nodes, edges }) > MAX_GRAPH_BYTES) {
    return { graph: null, issues: [{ path: [], message: `The graph is larger than ${MAX_GRAPH_BYTES} bytes` }] }
  }
  const issues = validateGraph(nodes, edges)
  return issues.length ? { graph: null, issues } : { graph: parsed.data, issues: [] }
}

/** Problems as lines: `nodes.2.parameters.url: Required`. */
function issueLines(issues: GraphIssue[]): string {
  const lines = issues
    .slice(0, MAX_LISTED_ISSUES)
    .map((issue) => `- ${issue.path.length ? issue.path.join('.') : '(answer)'}: ${issue.message}`)
  if (issues.length > MAX_LISTED_ISSUES) lines.push(`- and ${issues.length - MAX_LISTED_ISSUES} more`)
  return lines.join('\n')
}

/** One call of the model. @throws UpstreamError, UpstreamTimeoutError */
function ask(ctx: ResourceCtx, model: ResolvedModel, messages: ModelMessage[]): Promise<string> {
  const maxOutputTokens = Math.min(model.llm.maxOutputTokens || MAX_OUTPUT_TOKENS, MAX_OUTPUT_TOKENS)
  return completeText(model, ctx.config, { system: system(), messages, maxOutputTokens }, 'generate the workflow')
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
 *   message); UpstreamError (502) / UpstreamTimeoutError (504) when the provider fails.
 */
export async function generateWorkflow(ctx: ResourceCtx, input: TGenerateWorkflowInput): Promise<{ data: TWorkflow }> {
  const model = await resolveModel(
    { em: ctx.em, config: ctx.config },
    { workspaceId: ctx.workspace.workspace.id, userId: ctx.auth.user.id, slug: input.model ?? null, field: ['model'] },
  )
  if (model.driver === 'local') {
    throw new ValidationError(['model'], 'The local test model does not think and cannot design a workflow: choose another model')
  }
  const request = input.name ? `Workflow name: ${input.name}\n\n${input.description}` : input.description
  const messages: ModelMessage[] = [{ role: 'user', content: request }]
  const first = await ask(ctx, model, messages)
  let checked = checkAnswer(first)
  if (!checked.graph) {
    messages.push(
      { role: 'assistant', content: first.slice(0, MAX_ECHOED_ANSWER) },
      {
        role: 'user',
        content: `That answer has these problems:\n${issueLines(checked.issues)}\nAnswer with the corrected JSON object only.`,
      },
    )
    checked = checkAnswer(await ask(ctx, model, messages))
  }
  if (!checked.graph) {
    throw new ValidationError(
      ['description'],
      `The model did not produce a valid workflow for this description:\n${issueLines(checked.issues)}`,
    )
  }
  const { graph } = checked
  return create(ctx, {
    name: textOf(input.name, NAME_MAX) ?? textOf(graph.name, NAME_MAX) ?? textOf(input.description, 60) ?? 'Generated workflow',
    description: textOf(graph.description, DESCRIPTION_MAX) ?? textOf(input.description, DESCRIPTION_MAX) ?? '',
    nodes: graph.nodes,
    edges: graph.edges,
  })
}
