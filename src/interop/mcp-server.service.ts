/**
 * The MCP server's tools (docs/api/mcp.md): the agents, prompts and active workflows the caller
 * may run in the request's workspace, and calling them. A call is an ordinary run
 * (./runs.service.ts: `runAgent`, `runPrompt`) or manual execution (./workflow-runs.service.ts),
 * waited for, stored and readable over the REST API like any other.
 *
 * Errors follow the MCP specification ("Tools", "Error handling"): a name this server could
 * never have given is a protocol error ({@link UnknownToolError}, which the transport answers
 * as JSON-RPC `-32602`); everything that goes wrong with a tool it did list (the resource since
 * deleted, unshared or deactivated, bad arguments, a read-only token, a failed run) is a result
 * with `isError: true` and a message that names the field, and runs nothing.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js'
import { z } from 'zod'
import { listScopeSql } from '../access/resource-access.ts'
import { AppError, ForbiddenError, ValidationError, type FieldIssue } from '../platform/errors.ts'
import { fieldName } from '../access/issues.ts'
import type { TPromptInputField } from '../prompts/index.ts'
import { IF_BUSY, RUN_INPUT_MAX, type TRunResult } from '../runs/index.ts'
import { refineStorableJson } from '../access/resource.schema.ts'
import { isRecord, jsonValueOf, text } from '../access/wire.ts'
import type { TWorkflowExecutionDetail } from '../workflows/index.ts'
import { triggerOf } from '../workflows/index.ts'
import type { ResourceCtx } from '../context.ts'
import {
  AGENT_INPUT_SCHEMA,
  EXECUTION_OUTPUT_SCHEMA,
  hexOf,
  parseToolName,
  promptInputSchema,
  RUN_OUTPUT_SCHEMA,
  toolNames,
  type McpToolKind,
  type ObjectSchema,
} from './mcp-tools.ts'
import { triggerShape, type TriggerShape } from '../workflows/index.ts'
import { runAgent, runPrompt } from '../runs/index.ts'
import { run as runWorkflow } from '../workflows/index.ts'

/** Most resources of each kind offered as tools (the oldest first). */
export const MCP_TOOLS_PER_KIND = 500

/** A tool name this server never gives (docs/api/mcp.md, "Errors"): a JSON-RPC `-32602`, not a tool result. */
export class UnknownToolError extends AppError {
  override name = 'UnknownToolError'
  readonly status = 404
  constructor(toolName: string) {
    super(`Unknown tool: ${toolName.slice(0, 100)}`)
  }
}

/** One resource offered as a tool, with what calling it needs. */
interface ToolEntry {
  kind: McpToolKind
  name: string
  uuid: string
  title: string
  description: string
  inputSchema: ObjectSchema
  /** A prompt's declared inputs. */
  fields: TPromptInputField[]
  /** A workflow's trigger: its arguments and the execution input made of them. */
  shape: TriggerShape | null
}

/** A row of one kind, as {@link TOOLS_SQL} reads it. */
interface ToolRow {
  uuid: string
  name: string
  description: string | null
  inputs?: unknown
  triggers?: unknown
}

/** The rows of `table` (alias `r`) the caller may list, oldest first, with `columns`, as a JSON array. */
function rowsSql(ctx: ResourceCtx, table: 'agents' | 'prompts' | 'workflows', columns: string, where: string) {
  const scope = listScopeSql('r', table, ctx)
  return {
    sql: `(select coalesce(json_agg(json_build_object('uuid', x.uuid, 'name', x.name, 'description', x.description${columns}) order by x.id), '[]')
      from (select r.* from ${table} r where ${scope.sql}${where} order by r.id limit ${MCP_TOOLS_PER_KIND}) x)`,
    params: scope.params,
  }
}

/**
 * The caller's tools, in one statement: agents and prompts they may list (docs/api/tenancy.md:
 * the request workspace's that they see, and those shared with them or with it), and of the
 * workflows those that are active and have nodes. Running needs only `read`, which every listed
 * row grants.
 */
async function entries(ctx: ResourceCtx): Promise<ToolEntry[]> {
  const agents = rowsSql(ctx, 'agents', '', '')
  const prompts = rowsSql(ctx, 'prompts', ", 'inputs', x.metadata->'input'", '')
  const workflows = rowsSql(
    ctx,
    'workflows',
    ", 'triggers', (select json_agg(n->>'type') from jsonb_array_elements(x.nodes) n)",
    ' and r.is_active and jsonb_array_length(r.nodes) > 0',
  )
  const [row] = await ctx.em.execute<Record<string, unknown>[]>(
    `select ${agents.sql} as agents, ${prompts.sql} as prompts, ${workflows.sql} as workflows`,
    [...agents.params, ...prompts.params, ...workflows.params],
  )
  return [...entriesOf('agent', row.agents), ...entriesOf('prompt', row.prompts), ...entriesOf('workflow', row.workflows)]
}

/** Declared prompt inputs as stored; an entry that is no valid field is skipped (as the Prompt shape does). */
const StoredField = z.object({
  key: z.string(),
  label: z.string(),
  type: z.string(),
  required: z.boolean(),
  options: z.array(z.string()).optional(),
})

function entriesOf(kind: McpToolKind, json: unknown): ToolEntry[] {
  const parsed = jsonValueOf(json)
  const rows = (Array.isArray(parsed) ? parsed.filter(isRecord) : []).map(
    (row): ToolRow => ({ ...row, uuid: String(row.uuid), name: String(row.name), description: typeof row.description === 'string' ? row.description : null }),
  )
  const names = toolNames(kind, rows)
  return rows.map((row, index) => {
    const fields = kind === 'prompt' && Array.isArray(row.inputs) ? row.inputs.flatMap((field) => StoredField.safeParse(field).data ?? []) : []
    const triggers = Array.isArray(row.triggers) ? row.triggers.map((type) => ({ type })) : []
    const shape = kind === 'workflow' ? triggerShape(triggerOf(triggers)?.type) : null
    const said = row.description?.trim() || `Runs the ${kind} "${row.name}".`
    const note = shape?.note ? ` ${shape.note}` : ''
    return {
      kind,
      name: names[index],
      uuid: row.uuid,
      title: row.name,
      description: `${said}${note} (${kind} ${row.uuid})`,
      inputSchema: kind === 'agent' ? AGENT_INPUT_SCHEMA : kind === 'prompt' ? promptInputSchema(fields) : { type: 'object', ...shape?.schema },
      fields,
      shape,
    }
  })
}

/**
 * `tools/list`: every tool of the caller (module comment), agents first, then prompts, then
 * workflows, each kind oldest first; at most {@link MCP_TOOLS_PER_KIND} of each.
 */
export async function listTools(ctx: ResourceCtx): Promise<Tool[]> {
  return (await entries(ctx)).map((entry) => ({
    name: entry.name,
    title: entry.title,
    description: entry.description,
    inputSchema: entry.inputSchema,
    outputSchema: entry.kind === 'workflow' ? EXECUTION_OUTPUT_SCHEMA : RUN_OUTPUT_SCHEMA,
    annotations: { title: entry.title, readOnlyHint: false, destructiveHint: false, openWorldHint: true },
    _meta: { kind: entry.kind, uuid: entry.uuid },
  }))
}

/** The tool `name` names among the caller's, matched by kind and id (./mcp-tools.ts), or null. */
function findEntry(all: readonly ToolEntry[], name: string): ToolEntry | null {
  const parsed = parseToolName(name)
  if (!parsed) throw new UnknownToolError(name)
  const exact = all.find((entry) => entry.name === name)
  if (exact) return exact
  const matches = all.filter((entry) => entry.kind === parsed.kind && hexOf(entry.uuid).endsWith(parsed.id))
  return matches.length === 1 ? matches[0] : null
}

/**
 * `tools/call`: runs the tool `name` with `args` as the caller and answers the run or execution
 * (module comment). Never throws for a tool this server could have listed.
 * @throws UnknownToolError for any other name.
 */
export async function callTool(ctx: ResourceCtx, name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> {
  const entry = findEntry(await entries(ctx), name)
  if (!entry) {
    return failure(
      `The tool ${name} is not available to you any more: what it ran was deleted or unshared, or (a workflow) deactivated. List the tools again.`,
    )
  }
  try {
    // Running stores messages or an execution: a write (docs/api/authentication.md, read-only tokens).
    if (!ctx.auth.token.abilities.includes('write')) throw new ForbiddenError('This token is read-only; running a tool needs a token that may write')
    if (entry.kind === 'agent') return await callAgent(ctx, entry, args ?? {})
    if (entry.kind === 'prompt') return await callPrompt(ctx, entry, args ?? {})
    return await callWorkflow(ctx, entry, args ?? {})
  } catch (error) {
    if (error instanceof AppError) return failure(messageOf(error))
    ctx.log.error({ err: error, tool: entry.name }, 'MCP tool call failed')
    return failure(`The tool failed (request ${ctx.requestId})`)
  }
}

/** An error result: the model reads `text`; nothing else is answered. */
function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true }
}

/** A service error as a message; a validation error names its fields (arguments by their names in the tool's schema). */
function messageOf(error: AppError): string {
  if (error instanceof ArgumentsError) return `Invalid arguments: ${issuesText(error.issues)}`
  if (error instanceof ValidationError) return issuesText(error.issues)
  return error.message
}

function issuesText(issues: readonly FieldIssue[]): string {
  return issues.map((issue) => `${fieldName(issue.path) || 'arguments'}: ${issue.message}`).join('; ')
}

/** Arguments that do not match the tool's input schema; the issue paths are the arguments' own. */
class ArgumentsError extends AppError {
  override name = 'ArgumentsError'
  readonly status = 400
  constructor(readonly issues: FieldIssue[]) {
    super('Invalid arguments')
  }
}

/**
 * A service's validation error on the run's own input fields as one on the tool's arguments:
 * `rename` maps such a field (`input`, `thread_uuid`) to the argument path it came from (an
 * empty path: the argument is the field's member). Errors on other fields (the agent's model)
 * are left as they are.
 */
function asArgumentError(error: unknown, rename: Record<string, string[]>): unknown {
  if (!(error instanceof ValidationError)) return error
  const own = error.issues.every((issue) => typeof issue.path[0] === 'string' && issue.path[0] in rename)
  if (!own) return error
  return new ArgumentsError(error.issues.map((issue) => ({ ...issue, path: [...rename[String(issue.path[0])], ...issue.path.slice(1)] })))
}

function argumentsIssues(issues: readonly z.core.$ZodIssue[]): FieldIssue[] {
  return issues.map((issue) => ({ code: 'custom', path: issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)), message: issue.message }))
}

const AgentArgs = z.strictObject({ message: text(RUN_INPUT_MAX, 1), thread_uuid: z.uuid().optional(), if_busy: z.enum(IF_BUSY).optional() })

async function callAgent(ctx: ResourceCtx, entry: ToolEntry, args: Record<string, unknown>): Promise<CallToolResult> {
  const parsed = AgentArgs.safeParse(args)
  if (!parsed.success) throw new ArgumentsError(argumentsIssues(parsed.error.issues))
  const input = { agent_uuid: entry.uuid, input: parsed.data.message, thread_uuid: parsed.data.thread_uuid, if_busy: parsed.data.if_busy }
  const result = await runAgent(ctx, input).catch((error: unknown) => {
    throw asArgumentError(error, { input: ['message'], thread_uuid: ['thread_uuid'] })
  })
  return runResult(result)
}

async function callPrompt(ctx: ResourceCtx, entry: ToolEntry, args: Record<string, unknown>): Promise<CallToolResult> {
  // The prompt's declared inputs are checked by the run (src/prompts/prompt-render.ts), before anything is stored.
  const result = await runPrompt(ctx, { prompt_uuid: entry.uuid, input: args }).catch((error: unknown) => {
    throw asArgumentError(error, { input: [] })
  })
  return runResult(result)
}

/** Arguments of a workflow tool: JSON an execution can store as its input. */
const WorkflowArgs = z.record(z.string(), z.unknown()).superRefine((value, ctx) => refineStorableJson(value, ctx, []))

async function callWorkflow(ctx: ResourceCtx, entry: ToolEntry, args: Record<string, unknown>): Promise<CallToolResult> {
  const parsed = WorkflowArgs.safeParse(args)
  if (!parsed.success) throw new ArgumentsError(argumentsIssues(parsed.error.issues))
  const shape = entry.shape ?? triggerShape(undefined)
  if (shape.schema.additionalProperties === false && Object.keys(parsed.data).length > 0) {
    throw new ArgumentsError([{ code: 'custom', path: [Object.keys(parsed.data)[0]], message: 'This workflow takes no arguments' }])
  }
  const { data } = await runWorkflow(ctx, { workflow_uuid: entry.uuid, input: shape.input(parsed.data) })
  return executionResult(data)
}

function runResult({ data }: TRunResult): CallToolResult {
  const { run, usage } = data
  if (run.status === 'awaiting_approval') {
    // A result, not an error: the run waits for a person (docs/api/runs.md, "Approvals"), who
    // decides through the approvals API; the run then goes on by itself.
    const structured = { run_uuid: run.uuid, thread_uuid: run.thread_uuid, status: run.status, output: run.output, usage, approvals: data.approvals }
    const names = data.approvals.map((approval) => approval.tool_name).join(', ')
    return { content: [{ type: 'text', text: `The run ${run.uuid} waits for approval of: ${names}` }], structuredContent: structured }
  }
  const structured = { run_uuid: run.uuid, thread_uuid: run.thread_uuid, status: run.status, output: run.output, usage }
  // Handed over while this process shut down (docs/api/runs.md, "Shutdown and crashes"): it goes on elsewhere.
  if (run.status === 'running') return { content: [{ type: 'text', text: `The run ${run.uuid} goes on in another process` }], structuredContent: structured }
  const failed = run.status !== 'succeeded'
  const said = failed ? (run.error?.message ?? `The run ended ${run.status}`) : (run.output ?? '')
  return { content: [{ type: 'text', text: said }], structuredContent: structured, ...(failed ? { isError: true } : {}) }
}

function executionResult(execution: TWorkflowExecutionDetail): CallToolResult {
  const structured = { execution_uuid: execution.uuid, status: execution.status, output: execution.output ?? null, error: execution.error }
  const failed = execution.status !== 'succeeded'
  const said = failed
    ? (execution.error?.message ?? `The execution ended ${execution.status}`)
    : typeof execution.output === 'string'
      ? execution.output
      : JSON.stringify(execution.output ?? null)
  return { content: [{ type: 'text', text: said }], structuredContent: structured, ...(failed ? { isError: true } : {}) }
}
