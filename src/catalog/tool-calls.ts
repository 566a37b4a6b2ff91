/**
 * Executing an agent's `api` tools: the live tools bound to an agent with their
 * accounts' secrets opened ({@link loadAgentTools}), one HTTP call per tool call
 * ({@link callTool}: URL template, query or JSON body, credential, limits of ./tool-http.ts) and
 * the AI SDK tool set a run hands to `streamText` ({@link toToolSet}).
 *
 * Secrets: opened here for tools, kept in the binding's `credential`, never logged; every error
 * message and every output is scrubbed of the secret (raw, URL-encoded, JSON-escaped and the
 * Basic token) before it leaves {@link callTool}. Workflow HTTP request nodes
 * (src/workflows/nodes/http-request.ts) apply an account the same way through the exported
 * {@link credentialParts}, {@link secretForms}, {@link scrub}, {@link bodyText} and {@link parseBody}.
 */
import { jsonSchema, tool, type ToolSet } from 'ai'
import { AUTH_SCHEMES, TOOL_METHODS, type AuthScheme, type ToolMethod } from '../../entities/index.ts'
import type { Config } from '../platform/config.ts'
import type { Em } from '../platform/db.ts'
import { keyringOf, open, type Keyring } from '../platform/secrets.ts'
import { sendToolRequest, ToolHttpError, type ToolHttpRequest, type ToolHttpResponse } from './tool-http.ts'
import { isRecord, jsonValueOf } from '../access/wire.ts'
import { schemaValidator } from '../platform/json-schema.ts'

/** One tool an agent may call, ready to run. */
export interface ToolBinding {
  toolId: number
  toolUuid: string
  /** Function name for the model: unique among the agent's tools, `^[a-zA-Z0-9_-]{1,64}$`, derived from the tool name. */
  name: string
  description: string
  method: ToolMethod
  url: string
  /** The tool's input_schema, with `type: "object"` and `properties` filled in when absent. */
  inputSchema: Record<string, unknown>
  /** The bound account's opened secret and where it goes; null without a live bound account with a secret, or for scheme `none`. */
  credential: Credential | null
  /** Every call waits for a person's approval (docs/api/runs.md, "Approvals"). */
  requiresApproval: boolean
  /**
   * Calls are safe to repeat: each is sent with an `Idempotency-Key` derived from its run and call,
   * and one whose result was lost with its process is made again (docs/api/runs.md, "Interrupted runs").
   */
  idempotent: boolean
}

/** An account's opened secret and where its provider's auth scheme puts it (`parameter`: the header or query name). */
export interface Credential {
  scheme: AuthScheme
  parameter: string | null
  secret: string
}

/** What one tool call gave. `error` never holds a secret. */
export interface ToolCallOutcome {
  ok: boolean
  /** The HTTP status, when an answer arrived. */
  status?: number
  /** Parsed JSON, or text; null without a body. */
  output: unknown
  error?: string
}

/** A bound account's secret cannot be opened (no configured key has its id, or it was altered). */
export class ToolCredentialUnavailableError extends Error {
  override name = 'ToolCredentialUnavailableError'
}

/** The tool input cannot make a request (not an object, a path placeholder without a value), or the provider's auth scheme lacks its parameter. */
export class ToolInputError extends Error {
  override name = 'ToolInputError'
}

const schemeOf = (value: unknown): AuthScheme | undefined => AUTH_SCHEMES.find((scheme) => scheme === value)
const methodOf = (value: unknown): ToolMethod => TOOL_METHODS.find((method) => method === value) ?? 'GET'

// ---------------------------------------------------------------------------------------------
// Loading

/** A tool's function name from its display name: lower-case letters, digits, `_` and `-`, at most 64. */
function baseName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '_')
    .replace(/_{2,}/g, '_')
    .replace(/^[_-]+|[_-]+$/g, '')
  return slug.slice(0, 64) || 'tool'
}

/**
 * Unique function names for `names`, in order: a repeated name gets `_2`, `_3`, ...; a name in
 * `taken` (the names already offered to the same run) counts as repeated.
 */
export function functionNames(names: string[], taken: ReadonlySet<string> = new Set()): string[] {
  const used = new Set<string>(taken)
  return names.map((name) => {
    const base = baseName(name)
    let candidate = base
    for (let n = 2; used.has(candidate); n += 1) candidate = `${base.slice(0, 64 - String(n).length - 1)}_${n}`
    used.add(candidate)
    return candidate
  })
}

/** The schema the model sees: a JSON-Schema object, `type` and `properties` filled in when absent. */
export function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return { ...schema, type: 'object', properties: isRecord(schema.properties) ? schema.properties : {} }
}

/**
 * The agent's live `api` tools, in the agent's order, each with the bound account's secret opened
 * when the account is live and of the tool's provider (the rule of src/agents/agent-read.service.ts).
 * @throws ToolCredentialUnavailableError when a bound account's secret cannot be opened (a key
 *   missing from APP_KEY / APP_PREVIOUS_KEYS); the message names the tool and account, never the secret.
 */
export async function loadAgentTools(em: Em, config: Config, agentId: number): Promise<ToolBinding[]> {
  const [row] = await em.execute(`select ${agentToolsSql('?::bigint')} as tools`, [agentId])
  return agentToolBindings(config, row.tools)
}

/** The select of the tool rows {@link agentToolsSql} and {@link snapshotToolsSql} answer, over `from` ordered by `order`. */
const toolRowsSql = (from: string, where: string, order: string): string =>
  `(select coalesce(json_agg(json_build_object(
       'toolId', t.id, 'toolUuid', t.uuid, 'name', t.name, 'description', t.description, 'method', t.method, 'url', t.url,
       'inputSchema', t.input_schema, 'accountUuid', ac.uuid, 'ciphertext', ac.secret_ciphertext, 'keyId', ac.secret_key_id,
       'authScheme', p.auth_scheme, 'authParameter', p.auth_parameter, 'type', t.type, 'allowedTools', t.allowed_tools,
       'requiresApproval', t.requires_approval, 'idempotent', t.idempotent)
       order by ${order}), '[]')
     ${from}
     left join providers p on p.id = ac.provider_id
     where ${where})`

/**
 * A subquery answering the rows {@link agentToolBindings} takes (a JSON array) for the agent
 * whose id is the SQL `agentId` (a column or a `?`), so a caller can read them with the agent.
 * It holds the agent's `mcp` tools too (`type`), which ./tool-mcp.ts `mcpServerBindings` reads.
 */
export const agentToolsSql = (agentId: string): string =>
  toolRowsSql(
    `from agent_tools x
     join tools t on t.id = x.tool_id and t.deleted_at is null
     left join accounts ac on ac.id = x.account_id and ac.deleted_at is null and ac.provider_id = t.provider_id`,
    `x.agent_id = ${agentId}`,
    'x.position, x.id',
  )

/**
 * {@link agentToolsSql} for the tools of an agent version's snapshot (docs/api/versions.md): the
 * jsonb expression `tools` is the snapshot's `[{tool_uuid, account_uuid}]`; live tools only, each
 * with its account while it is live and of the tool's provider, in the snapshot's order.
 */
export const snapshotToolsSql = (tools: string): string =>
  toolRowsSql(
    `from jsonb_array_elements(${tools}) with ordinality x(link, position)
     join tools t on t.uuid = (x.link->>'tool_uuid')::uuid and t.deleted_at is null
     left join accounts ac on ac.uuid = (x.link->>'account_uuid')::uuid and ac.deleted_at is null and ac.provider_id = t.provider_id`,
    'true',
    'x.position',
  )

/**
 * The bindings of the `api` rows {@link agentToolsSql} read, secrets opened as {@link loadAgentTools} says.
 * @param reserved function names the run offers for something else (a provider's web search), which no tool may take.
 * @throws ToolCredentialUnavailableError as {@link loadAgentTools}.
 */
export function agentToolBindings(config: Config, value: unknown, reserved: ReadonlySet<string> = new Set()): ToolBinding[] {
  const rows = agentToolRows(value).filter((row) => row.type !== 'mcp')
  const names = functionNames(rows.map((row) => String(row.name)), reserved)
  const keyring = keyringOf(config)
  return rows.map((row, index): ToolBinding => {
    const stored = jsonValueOf(row.inputSchema)
    return {
      toolId: Number(row.toolId),
      toolUuid: String(row.toolUuid),
      name: names[index],
      description: String(row.description ?? '') || String(row.name),
      method: methodOf(row.method),
      url: String(row.url),
      inputSchema: objectSchema(isRecord(stored) ? stored : {}),
      credential: credentialOf(keyring, row),
      requiresApproval: row.requiresApproval === true,
      idempotent: row.idempotent === true,
    }
  })
}

/** The rows of an {@link agentToolsSql} value (a JSON array, or its text). */
export function agentToolRows(value: unknown): Record<string, unknown>[] {
  const parsed = jsonValueOf(value)
  return Array.isArray(parsed) ? parsed.filter(isRecord) : []
}

/**
 * The opened credential of an {@link agentToolsSql} row: null without a live bound account with
 * a secret, or for the scheme `none`.
 * @throws ToolCredentialUnavailableError when the secret cannot be opened (the message names the tool and account, never the secret).
 */
export function credentialOf(keyring: Keyring, row: Record<string, unknown>): Credential | null {
  const scheme = schemeOf(row.authScheme)
  if (typeof row.accountUuid !== 'string' || typeof row.ciphertext !== 'string' || typeof row.keyId !== 'string' || !scheme || scheme === 'none') {
    return null
  }
  let secret: string
  try {
    secret = open(keyring, { ciphertext: row.ciphertext, keyId: row.keyId }, `accounts:${row.accountUuid}`)
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'it cannot be opened'
    throw new ToolCredentialUnavailableError(`The secret of account ${row.accountUuid} (tool "${String(row.name)}") cannot be opened: ${reason}`)
  }
  return { scheme, parameter: typeof row.authParameter === 'string' ? row.authParameter : null, secret }
}

// ---------------------------------------------------------------------------------------------
// Building the request

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g
const WHOLE_PLACEHOLDER = /^\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}$/

/** The input value a placeholder names: the key itself, else a dotted path into nested objects; and the top-level key it uses. */
function lookup(input: Record<string, unknown>, name: string): { value: unknown; key: string } {
  if (Object.hasOwn(input, name)) return { value: input[name], key: name }
  const [first, ...rest] = name.split('.')
  let value: unknown = Object.hasOwn(input, first) ? input[first] : undefined
  for (const part of rest) value = isRecord(value) && Object.hasOwn(value, part) ? value[part] : undefined
  return { value, key: first }
}

/** A value as URL text before encoding: arrays of scalars comma-joined, objects as JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value) && value.every((item) => !isRecord(item) && !Array.isArray(item))) return value.map(asText).join(',')
  if (isRecord(value) || Array.isArray(value)) return JSON.stringify(value)
  return String(value)
}

const missing = (value: unknown) => value === undefined || value === null

/**
 * Fills a URL template: each `{{name}}` becomes the input's value, URL-encoded. In the path a
 * missing value (or `.`/`..`) is an error; in the query a `key={{name}}` pair without a value is
 * dropped, and a placeholder inside a longer value becomes empty. The fragment is dropped.
 */
function fillTemplate(template: string, input: Record<string, unknown>, used: Set<string>): string {
  const withoutFragment = template.split('#')[0]
  const queryAt = withoutFragment.indexOf('?')
  const path = queryAt < 0 ? withoutFragment : withoutFragment.slice(0, queryAt)
  const query = queryAt < 0 ? null : withoutFragment.slice(queryAt + 1)
  const filledPath = path.replace(PLACEHOLDER, (_match, name: string) => {
    const { value, key } = lookup(input, name)
    used.add(key)
    if (missing(value)) throw new ToolInputError(`The tool URL needs "${name}", which the input does not give`)
    const text = asText(value)
    if (text === '.' || text === '..') throw new ToolInputError(`"${name}" cannot be "${text}" in the URL path`)
    return encodeURIComponent(text)
  })
  if (query === null) return filledPath
  const pairs = query.split('&').flatMap((pair) => {
    const equals = pair.indexOf('=')
    const whole = equals < 0 ? null : WHOLE_PLACEHOLDER.exec(pair.slice(equals + 1))
    if (whole) {
      const { value, key } = lookup(input, whole[1])
      used.add(key)
      if (missing(value)) return []
    }
    return [
      pair.replace(PLACEHOLDER, (_match, name: string) => {
        const { value, key } = lookup(input, name)
        used.add(key)
        return missing(value) ? '' : encodeURIComponent(asText(value))
      }),
    ]
  })
  return pairs.length ? `${filledPath}?${pairs.join('&')}` : filledPath
}

/** `key=value` pairs of the input's remaining fields (arrays repeat the key). */
function queryPairs(fields: [string, unknown][]): string[] {
  return fields.flatMap(([key, value]) => {
    const values = Array.isArray(value) ? value : [value]
    return values.filter((item) => !missing(item)).map((item) => `${encodeURIComponent(key)}=${encodeURIComponent(asText(item))}`)
  })
}

const BODY_METHODS: ReadonlySet<ToolMethod> = new Set(['POST', 'PUT', 'PATCH'])

/** The HTTP request of one call: template filled, remaining input as query or JSON body, credential applied. */
function buildRequest(binding: ToolBinding, input: unknown, idempotencyKey?: string): ToolHttpRequest {
  const fields = input === undefined || input === null ? {} : input
  if (!isRecord(fields)) throw new ToolInputError('The tool input must be a JSON object')
  const used = new Set<string>()
  const filled = fillTemplate(binding.url, fields, used)
  const { headers: credentialHeaders, query: queryCredential } = credentialParts(binding.credential)
  const remaining = Object.entries(fields).filter(([key]) => !used.has(key) && key !== queryCredential?.name)
  const extra = BODY_METHODS.has(binding.method) ? [] : queryPairs(remaining)
  if (queryCredential) extra.push(`${encodeURIComponent(queryCredential.name)}=${encodeURIComponent(queryCredential.value)}`)
  const text = extra.length ? `${filled}${filled.includes('?') ? '&' : '?'}${extra.join('&')}` : filled
  if (!URL.canParse(text)) throw new ToolInputError('The filled tool URL is not a valid URL')
  const url = new URL(text)

  const headers: Record<string, string> = {
    accept: 'application/json, text/plain;q=0.9, */*;q=0.8',
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': 'agent-workspace-service (tool call)',
  }
  if (idempotencyKey !== undefined && binding.idempotent) headers['idempotency-key'] = idempotencyKey
  let body: string | undefined
  if (BODY_METHODS.has(binding.method)) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(Object.fromEntries(remaining))
  }
  return { method: binding.method, url, headers, credentialHeaders, body }
}

/**
 * Where a credential goes by its provider's auth scheme: an `authorization` header (`bearer`,
 * `basic`), the header `parameter` names (`header`, lower-cased), or the query parameter
 * `parameter` names (`query`: answered as `query` for the caller to add to the URL). Used by
 * tools and by workflow HTTP request nodes alike, so both apply an account the same way.
 * @throws ToolInputError when the `header` or `query` scheme names no parameter.
 */
export function credentialParts(credential: Credential | null): { headers: Record<string, string>; query: { name: string; value: string } | null } {
  const headers: Record<string, string> = {}
  if (!credential) return { headers, query: null }
  const { scheme, parameter, secret } = credential
  if ((scheme === 'header' || scheme === 'query') && !parameter) {
    throw new ToolInputError(`The provider uses the "${scheme}" auth scheme but names no auth_parameter`)
  }
  if (scheme === 'bearer') headers.authorization = `Bearer ${secret}`
  if (scheme === 'basic') headers.authorization = `Basic ${basicToken(secret)}`
  if (scheme === 'header' && parameter) headers[parameter.toLowerCase()] = secret
  return { headers, query: scheme === 'query' && parameter ? { name: parameter, value: secret } : null }
}

/** Basic credentials: a secret `user:password` as is, any other secret as the user name with an empty password. */
const basicToken = (secret: string) => Buffer.from(secret.includes(':') ? secret : `${secret}:`, 'utf8').toString('base64')

// ---------------------------------------------------------------------------------------------
// Reading the answer

const REDACTED = '[redacted]'

/** Every form the secret may take in text we pass on, longest first (for {@link scrub}). */
export function secretForms(secret: string | undefined): string[] {
  if (!secret) return []
  const forms = new Set([secret, encodeURIComponent(secret), JSON.stringify(secret).slice(1, -1), basicToken(secret)])
  return [...forms].filter(Boolean).sort((a, b) => b.length - a.length)
}

/** `text` with every form of a secret ({@link secretForms}) replaced by `[redacted]`. */
export const scrub = (text: string, forms: string[]) => forms.reduce((result, form) => result.split(form).join(REDACTED), text)

const TEXTUAL = /^(text\/|application\/(json|.*\+json|xml|.*\+xml|javascript|x-www-form-urlencoded|x-ndjson|yaml|x-yaml))/i
const JSON_TYPE = /^application\/(json|.*\+json)/i

/** The body as text, or null when it is not text (a binary type, or not valid UTF-8). */
export function bodyText(response: ToolHttpResponse): string | null {
  const type = response.contentType.split(';')[0].trim()
  if (type && !TEXTUAL.test(type) && /^(image|audio|video|font)\/|octet-stream|zip|pdf/i.test(type)) return null
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(response.body)
  } catch {
    return null
  }
}

/**
 * Parsed JSON for JSON (or JSON-looking untyped) answers, else text (a placeholder naming the
 * type and size for binary answers); null without a body. Secrets (`forms`) are scrubbed first.
 */
export function parseBody(response: ToolHttpResponse, forms: string[]): unknown {
  if (response.body.length === 0) return null
  const raw = bodyText(response)
  if (raw === null) return `[binary answer: ${response.contentType || 'no content type'}, ${response.body.length} bytes]`
  const text = scrub(raw, forms)
  if (JSON_TYPE.test(response.contentType) || (!response.contentType && /^\s*[[{]/.test(text))) {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  return text
}

/** At most `max` characters of an answer, whitespace collapsed (for error messages). */
export function excerpt(output: unknown, max = 300): string {
  const text = (typeof output === 'string' ? output : JSON.stringify(output) ?? '').replace(/\s+/g, ' ').trim()
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/**
 * Runs one tool call. Never throws: upstream trouble (refused address, timeout, too large an
 * answer, a non-2xx status, connection errors) and input that cannot make a request are
 * `ok: false` with a clear `error`. A non-2xx answer keeps its `status` and parsed `output`.
 * `idempotencyKey` goes out as the `Idempotency-Key` header (the IETF httpapi draft) when the tool
 * is {@link ToolBinding.idempotent}, so a call made again after a lost result is one call upstream.
 */
export async function callTool(
  binding: ToolBinding,
  input: unknown,
  options: { config: Config; signal?: AbortSignal; idempotencyKey?: string },
): Promise<ToolCallOutcome> {
  const forms = secretForms(binding.credential?.secret)
  try {
    const response = await sendToolRequest(buildRequest(binding, input, options.idempotencyKey), options.config.tools, options.signal)
    const output = parseBody(response, forms)
    if (response.status >= 200 && response.status < 300) return { ok: true, status: response.status, output }
    const said = excerpt(output)
    const error = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${response.url.host}${said ? `: ${said}` : ''}`
    return { ok: false, status: response.status, output, error: scrub(error, forms) }
  } catch (error) {
    const known = error instanceof ToolHttpError || error instanceof ToolInputError
    const message = known ? error.message : 'The tool call failed unexpectedly'
    return { ok: false, output: null, error: scrub(message, forms) }
  }
}

// ---------------------------------------------------------------------------------------------
// AI SDK tools

type Validation = { success: true; value: Record<string, unknown> } | { success: false; error: Error }

/** Checks tool input against the tool's schema (src/platform/json-schema.ts: compiled once per schema). */
export function validatorFor(schema: Record<string, unknown>): (value: unknown) => Validation {
  const problemOf = schemaValidator(schema)
  return (value) => {
    const problem = problemOf(value)
    if (problem !== null) return { success: false, error: new Error(problem) }
    return isRecord(value) ? { success: true, value } : { success: false, error: new Error('input must be an object') }
  }
}

/**
 * AI SDK tools for `streamText`/`generateText`, keyed by {@link ToolBinding.name}. Input is checked
 * against the tool's input_schema (Ajv) before `execute`; `execute` runs {@link callTool} and,
 * when the call is not ok, throws an Error whose message is the outcome's `error`, so the model
 * receives a failed tool result (`tool-error`) and the run goes on. The run's `signal` and the
 * SDK's own abort signal both cancel a call. `idempotencyKey` names each call's `Idempotency-Key`
 * by its tool call id (sent for idempotent tools only, {@link callTool}).
 */
export function toToolSet(
  bindings: ToolBinding[],
  options: { config: Config; signal?: AbortSignal; idempotencyKey?: (toolCallId: string) => string },
): ToolSet {
  const tools: ToolSet = {}
  for (const binding of bindings) {
    tools[binding.name] = objectTool(binding, options.signal, async (input, signal, toolCallId) => {
      const outcome = await callTool(binding, input, { config: options.config, signal, idempotencyKey: options.idempotencyKey?.(toolCallId) })
      if (!outcome.ok) throw new Error(outcome.error ?? 'The tool call failed')
      return outcome.output
    })
  }
  return tools
}

/**
 * An AI SDK tool taking one JSON object that `inputSchema` validates (made an object schema by
 * {@link objectSchema}), run by `execute` with one signal that aborts when the run's `runSignal`
 * or the SDK's own does.
 * What `execute` throws becomes a failed tool result for the model's next step.
 */
export function objectTool(
  o: { description: string; inputSchema: Record<string, unknown> },
  runSignal: AbortSignal | undefined,
  execute: (input: Record<string, unknown>, signal: AbortSignal | undefined, toolCallId: string) => Promise<unknown>,
): ToolSet[string] {
  const schema = objectSchema(o.inputSchema)
  return tool({
    description: o.description,
    inputSchema: jsonSchema<Record<string, unknown>>(schema, { validate: validatorFor(schema) }),
    execute: (input, { abortSignal, toolCallId }) => {
      const signals = [runSignal, abortSignal].filter((signal): signal is AbortSignal => signal !== undefined)
      return execute(input, signals.length > 1 ? AbortSignal.any(signals) : signals[0], toolCallId)
    },
  })
}
