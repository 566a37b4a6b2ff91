/**
 * An agent's `mcp` tools during a run (docs/api/mcp-tools.md; docs/api/runs.md, "MCP tools"): for
 * each one, a Model Context Protocol client (the official SDK's `Client` over its
 * `StreamableHTTPClientTransport`) connects to the tool's server, lists its tools (`tools/list`,
 * narrowed by `allowed_tools`) and offers each to the model as an AI SDK tool named
 * `<tool>__<remote name>`, run by `tools/call`.
 *
 * Every HTTP request the client makes goes through the transport of `api` tools
 * (./tool-http.ts `sendToolRequest`): the same private-address rule, whole-request deadline
 * (TOOL_TIMEOUT_MS) and response-size cap (TOOL_MAX_RESPONSE_BYTES), and the bound account's
 * credential applied as ./tools.ts `credentialParts` applies it. Answers are read whole, so a
 * server's answer to one message, JSON or an event stream, arrives once the server has sent it
 * all; the standing GET event stream (server-initiated messages, which this client does not use)
 * is declined locally, as a server without one answers it.
 *
 * Failures never end a run: a server that cannot be reached or listed at the start is a
 * `run.warning` (`mcp_tools_unavailable`) and the run goes on without its tools; a call that fails
 * (refused, timed out, not MCP, an `isError` result) is a failed tool result the model reads.
 * Messages are scrubbed of the account's secret in every form it may take.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { ToolSet } from 'ai'
import type { Config } from '../platform/config.ts'
import { keyringOf } from '../platform/secrets.ts'
import type { TRunWarning } from './run.schema.ts'
import { isRecord } from '../access/wire.ts'
import { sendToolRequest, ToolHttpError, type ToolHttpLimits } from '../catalog/index.ts'
import { agentToolRows, credentialOf, credentialParts, excerpt, functionNames, objectTool, scrub, secretForms, type Credential } from '../catalog/index.ts'

/** One `mcp` tool bound to an agent, ready to connect. */
export interface McpServerBinding {
  toolUuid: string
  /** The tool's name, as warnings quote it. */
  name: string
  /** Start of the function names of its remote tools: from the tool's name, unique among the run's `mcp` tools. */
  prefix: string
  /** The server's Streamable HTTP endpoint. */
  url: string
  /** Remote tool names offered to the model; null offers every tool the server lists. */
  allowedTools: string[] | null
  /** The bound account's opened secret and where it goes (./tools.ts `Credential`); null without one. */
  credential: Credential | null
  /** Every call of its tools waits for a person's approval (docs/api/runs.md, "Approvals"). */
  requiresApproval: boolean
  /** Calls of its tools are safe to repeat (docs/api/runs.md, "Interrupted runs"). */
  idempotent: boolean
}

/** What a run holds of its `mcp` tools while it executes. */
export interface McpSession {
  /** The remote tools, keyed by function name. */
  tools: ToolSet
  /** One `mcp_tools_unavailable` warning per server that could not be listed. */
  warnings: TRunWarning[]
  /** Ends every connection (never throws). */
  close(): Promise<void>
}

/** Most `tools/list` pages read from one server. */
const MAX_LIST_PAGES = 10
/** Longest function name providers accept (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
const NAME_MAX = 64
/** Longest prefix kept, so the remote name stays readable. */
const PREFIX_MAX = 24

/**
 * The `mcp` rows of an `agentToolsSql` value (./tools.ts) as bindings, secrets opened.
 * @throws ToolCredentialUnavailableError as ./tools.ts `credentialOf`.
 */
export function mcpServerBindings(config: Config, value: unknown): McpServerBinding[] {
  const rows = agentToolRows(value).filter((row) => row.type === 'mcp')
  const prefixes = functionNames(rows.map((row) => String(row.name)))
  const keyring = keyringOf(config)
  return rows.map((row, index) => ({
    toolUuid: String(row.toolUuid),
    name: String(row.name),
    prefix: prefixes[index].slice(0, PREFIX_MAX).replace(/[_-]+$/, '') || 'mcp',
    url: String(row.url),
    allowedTools: Array.isArray(row.allowedTools) ? row.allowedTools.map(String) : null,
    credential: credentialOf(keyring, row),
    requiresApproval: row.requiresApproval === true,
    idempotent: row.idempotent === true,
  }))
}

/**
 * Connects to every server of `servers` at once, lists their tools and answers them as AI SDK
 * tools (module comment). Never throws: a server that fails is a warning. `signal` (the run's)
 * ends connections under way and calls in flight.
 * @param taken function names the run already offers (none of them contains `__`, which every name here does).
 */
export async function openMcpTools(
  servers: McpServerBinding[],
  o: { config: Config; signal: AbortSignal; taken?: ReadonlySet<string> },
): Promise<McpSession> {
  const opened = await Promise.all(servers.map((server) => connect(server, o.config.tools, o.signal)))
  const used = new Set(o.taken ?? [])
  const tools: ToolSet = {}
  const warnings: TRunWarning[] = []
  for (const [index, result] of opened.entries()) {
    const server = servers[index]
    if ('error' in result) {
      warnings.push({ code: 'mcp_tools_unavailable', message: `The MCP tool "${server.name}" could not list its tools (${result.error}); the run goes on without them` })
      continue
    }
    for (const remote of result.remotes) {
      const name = uniqueName(`${server.prefix}__${remote.name.replace(/[^A-Za-z0-9_-]/g, '_')}`, used)
      tools[name] = objectTool({ description: remote.description || remote.name, inputSchema: remote.inputSchema }, o.signal, (input, signal) =>
        callRemote(result, remote.name, input, signal, o.config.tools.timeoutMs),
      )
    }
  }
  const close = async () => {
    await Promise.all(opened.map((result) => ('client' in result ? result.close() : undefined)))
  }
  return { tools, warnings, close }
}

/** `base` cut to {@link NAME_MAX}, with `_2`, `_3`, ... when `used` has it; added to `used`. */
function uniqueName(base: string, used: Set<string>): string {
  const cut = base.slice(0, NAME_MAX)
  let candidate = cut
  for (let n = 2; used.has(candidate); n += 1) candidate = `${cut.slice(0, NAME_MAX - String(n).length - 1)}_${n}`
  used.add(candidate)
  return candidate
}

/** A remote tool as the model is offered it. */
interface RemoteTool {
  name: string
  description: string
  inputSchema: Record<string, unknown>
}

/** A connected server: its client, its listed tools and what its messages must be scrubbed of. */
interface Connection {
  client: Client
  host: string
  forms: string[]
  remotes: RemoteTool[]
  /** The last message the transport could not read (answered as the cause when a call then times out). */
  unreadable: { seen: boolean }
  close(): Promise<void>
}

/** Connects (`initialize`) and lists the tools of one server; its failure, scrubbed, as `error`. */
async function connect(server: McpServerBinding, limits: ToolHttpLimits, runSignal: AbortSignal): Promise<Connection | { error: string }> {
  const forms = secretForms(server.credential?.secret)
  let url: URL
  try {
    url = new URL(server.url)
  } catch {
    return { error: 'its url is not a valid URL' }
  }
  const host = url.host
  const client = new Client({ name: 'agent-workspace-service', version: '1.0.0' })
  const unreadable = { seen: false }
  const transport = new StreamableHTTPClientTransport(url, {
    fetch: guardedFetch(server.credential, limits, runSignal),
    // Redirects are followed (and checked) by the guarded transport itself.
    redirectPolicy: 'follow',
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 0, maxReconnectionDelay: 0, reconnectionDelayGrowFactor: 1 },
  })
  const close = () => client.close().catch(() => undefined)
  const options = { timeout: limits.timeoutMs, signal: runSignal }
  try {
    // A message the transport cannot read is remembered (a call then waits for its answer in vain), not logged.
    client.onerror = (error) => {
      if (isUnreadable(error)) unreadable.seen = true
    }
    await client.connect(transport, options)
    const remotes: RemoteTool[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const listed = await client.listTools(cursor ? { cursor } : {}, options)
      for (const tool of listed.tools) {
        if (server.allowedTools && !server.allowedTools.includes(tool.name)) continue
        remotes.push({ name: tool.name, description: tool.description ?? '', inputSchema: { ...tool.inputSchema } })
      }
      cursor = listed.nextCursor
      if (!cursor) break
    }
    return { client, host, forms, remotes, unreadable, close }
  } catch (error) {
    await close()
    return { error: failureText(error, host, limits.timeoutMs, forms, false) }
  }
}

/**
 * One `tools/call`: the result's `structuredContent` when it has one, else its text (the text
 * items joined) or its content items. @throws Error (the message the model reads) when the call
 * fails or answers `isError`.
 */
async function callRemote(connection: Connection, name: string, input: Record<string, unknown>, signal: AbortSignal | undefined, timeoutMs: number): Promise<unknown> {
  // The cause is not kept: it may hold what the server sent, secret included.
  const result = await connection.client.callTool({ name, arguments: input }, undefined, { timeout: timeoutMs, signal }).catch((error: unknown) => {
    return new Error(failureText(error, connection.host, timeoutMs, connection.forms, connection.unreadable.seen))
  })
  if (result instanceof Error) throw result
  const output = scrubbed(outputOf(result), connection.forms)
  if (result.isError === true) {
    const said = excerpt(output)
    throw new Error(`The MCP tool ${name} answered an error${said ? `: ${said}` : ''}`)
  }
  return output
}

/** What a `tools/call` result gives the model (see {@link callRemote}). */
function outputOf(result: Record<string, unknown>): unknown {
  if (isRecord(result.structuredContent)) return result.structuredContent
  const content = Array.isArray(result.content) ? result.content : 'toolResult' in result ? [result.toolResult] : []
  const texts = content.filter((item) => isRecord(item) && item.type === 'text' && typeof item.text === 'string').map((item) => String(item.text))
  return texts.length === content.length ? texts.join('\n') : content
}

/** `value` with every form of the secret replaced (JSON round trip, so keys and nested strings are covered). */
function scrubbed(value: unknown, forms: string[]): unknown {
  if (forms.length === 0 || value === undefined) return value
  return JSON.parse(scrub(JSON.stringify(value), forms))
}

/** Whether the SDK failed to read an answer: not JSON, or not a JSON-RPC message (its zod parse). */
const isUnreadable = (error: unknown) => error instanceof SyntaxError || (error instanceof Error && error.name === 'ZodError')

/** Why a request to the server failed, for the model and the run's events: short, and scrubbed. */
function failureText(error: unknown, host: string, timeoutMs: number, forms: string[], unreadable: boolean): string {
  let text: string
  if (error instanceof ToolHttpError) text = error.message
  else if (error instanceof McpError && error.code === Number(ErrorCode.RequestTimeout)) {
    text = unreadable ? `${host} answered something that is not an MCP (JSON-RPC) message` : `${host} did not answer within TOOL_TIMEOUT_MS (${timeoutMs} ms)`
  } else if (isUnreadable(error)) text = `${host} answered something that is not an MCP (JSON-RPC) message`
  else if (error instanceof Error) text = `The MCP server at ${host} failed: ${excerpt(error.message)}`
  else text = `The MCP server at ${host} failed`
  return scrub(text, forms)
}

/**
 * The `fetch` the SDK's transport uses: each request through `sendToolRequest` (module comment),
 * the credential added as `api` tools add it; the standing GET stream answered 405 locally.
 */
function guardedFetch(credential: Credential | null, limits: ToolHttpLimits, runSignal: AbortSignal): FetchLike {
  const { headers: credentialHeaders, query } = credentialParts(credential)
  return async (input, init) => {
    const asked = (init?.method ?? 'GET').toUpperCase()
    if (asked !== 'POST' && asked !== 'DELETE') return new Response(null, { status: 405 })
    const method = asked === 'POST' ? 'POST' : 'DELETE'
    const url = new URL(String(input))
    if (query) url.searchParams.append(query.name, query.value)
    const headers: Record<string, string> = { 'user-agent': 'agent-workspace-service (mcp tool)', 'accept-encoding': 'gzip, deflate, br' }
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value))
    const signal = init?.signal ? AbortSignal.any([init.signal, runSignal]) : runSignal
    const body = typeof init?.body === 'string' ? init.body : undefined
    const answer = await sendToolRequest({ method, url, headers, credentialHeaders, body }, limits, signal)
    if (answer.status < 200 || answer.status > 599) throw new ToolHttpError(`${url.host} answered the status ${answer.status}`)
    // The body is already decompressed and whole.
    const kept = Object.entries(answer.headers).filter(([name]) => name !== 'content-encoding' && name !== 'content-length' && name !== 'transfer-encoding')
    const empty = answer.status === 204 || answer.status === 205 || answer.status === 304 || answer.body.length === 0
    return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers: kept })
  }
}
