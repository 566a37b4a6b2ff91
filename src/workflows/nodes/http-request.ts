/**
 * The HTTP request node (docs/api/workflows.md). The request goes through the tools'
 * transport (src/catalog/tool-http.ts: TOOL_MAX_RESPONSE_BYTES, redirects, private addresses refused
 * unless TOOL_ALLOW_PRIVATE_NETWORK) and applies an account's credentials by its provider's auth
 * scheme exactly as tools do (`credentialParts` of src/catalog/tool-calls.ts). The account must be one of
 * the workflow's workspace that the execution's user may use (the engine's services port,
 * `WorkflowServices.accountCredential`, checks it and opens the secret).
 *
 * Secrets: the account's secret is sent as a credential header (dropped on a redirect to another
 * origin) or query parameter, and scrubbed from the output and from every error message.
 */
import { z } from 'zod'
import { sendToolRequest, ToolHttpError, type HttpMethod, type ToolHttpResponse } from '../../catalog/index.ts'
import { bodyText, credentialParts, excerpt, parseBody, scrub, secretForms, type Credential } from '../../catalog/index.ts'
import { SecretUnavailableError } from '../../platform/secrets.ts'
import { expr } from '../expressions.ts'
import { NodeError, type AccountCredentialAnswer, type NodeContext, type NodeType } from '../types.ts'

/** The methods a request may use. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const
/** Methods whose requests carry no body. */
const BODILESS: ReadonlySet<string> = new Set(['GET', 'HEAD'])
/** Longest request timeout a node may ask for, in milliseconds. */
export const MAX_TIMEOUT_MS = 300_000
/** Headers the HTTP client sets itself; a node setting them would break the request. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection'])

/** An HTTP header name (an RFC 9110 token). */
export const HeaderName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name')
/** A header value node's HTTP client accepts: tab and printable Latin-1, no line breaks. */
const HeaderValue = z
  .string()
  .max(8192)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'must hold only printable Latin-1 characters (no line breaks)')

/** Header name -> value (or expression); names are sent in lower case, the client's own headers refused. */
export const HeaderMap = z.record(HeaderName, expr(HeaderValue)).superRefine((headers, ctx) => {
  for (const name of Object.keys(headers)) {
    if (RESERVED_HEADERS.has(name.toLowerCase()))
      ctx.addIssue({ code: 'custom', path: [name], message: `The ${name} header is set by the HTTP client` })
  }
})

/** An absolute http or https URL. */
const HttpUrl = z
  .string()
  .min(1)
  .max(8192)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'must be an http or https URL')

const HttpParams = z
  .strictObject({
    method: z.enum(HTTP_METHODS).default('GET'),
    url: expr(HttpUrl).meta({ description: 'An http or https URL, or an expression answering one' }),
    headers: HeaderMap.optional(),
    query: z
      .record(z.string().min(1).max(200), expr(z.union([z.string().max(8192), z.number(), z.boolean()])))
      .optional()
      .meta({ description: 'Query parameters appended to the URL' }),
    body: z
      .unknown()
      .optional()
      .meta({ description: 'Any JSON value (expressions anywhere): sent as JSON, or as is when a string with a content-type header' }),
    account_uuid: z
      .uuid()
      .optional()
      .meta({ description: "An account of the workflow's workspace whose credentials are applied by its provider's auth scheme" }),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_MS)
      .optional()
      .meta({ description: 'Whole-request deadline in milliseconds (default TOOL_TIMEOUT_MS)' }),
    response_format: z
      .enum(['auto', 'json', 'text'])
      .default('auto')
      .meta({ description: 'auto: JSON when the answer says so, else text' }),
  })
  .superRefine((params, ctx) => {
    if (params.body !== undefined && BODILESS.has(params.method))
      ctx.addIssue({ code: 'custom', path: ['body'], message: `A ${params.method} request carries no body` })
  })
type THttpParams = z.infer<typeof HttpParams>

/** `http_request`: output `{status, headers, body}`. */
export const httpRequest: NodeType<THttpParams> = {
  type: 'http_request',
  label: 'HTTP request',
  description:
    "Calls an HTTP API, optionally with an account's credentials; outputs {status, headers, body}. 5xx answers and timeouts are retried.",
  kind: 'action',
  parameters: HttpParams,
  outputs: () => null,
  defaultRetry: { max_attempts: 3, delay_ms: 200 },
  execute,
}

/**
 * Sends the request and reads its answer.
 * @throws NodeError `http_status` (4xx: not retryable except 408 and 429; 5xx: retryable),
 *   `timeout`, `too_large`, `network` (retryable unless the address or a redirect was refused),
 *   `canceled`, `invalid_response` (response_format json, and the answer is not JSON),
 *   `invalid_parameters` (a URL or account that cannot be used), `credential_unavailable`.
 */
async function execute(context: NodeContext<THttpParams>) {
  const { params, deps } = context
  if (!URL.canParse(params.url)) throw new NodeError('invalid_parameters', 'url: not a valid URL', false)
  const url = new URL(params.url)
  url.hash = ''
  for (const [name, value] of Object.entries(params.query ?? {})) url.searchParams.append(name, String(value))
  const credential = params.account_uuid ? await accountCredential(context, params.account_uuid) : null
  const forms = secretForms(credential?.secret)
  let parts: ReturnType<typeof credentialParts>
  try {
    parts = credentialParts(credential)
  } catch (error) {
    throw new NodeError('invalid_parameters', error instanceof Error ? error.message : 'The account cannot be applied', false)
  }
  if (parts.query) url.searchParams.set(parts.query.name, parts.query.value)

  const headers: Record<string, string> = {
    accept: 'application/json, text/plain;q=0.9, */*;q=0.8',
    'accept-encoding': 'gzip, deflate, br',
    'user-agent': 'agent-workspace-service (workflow)',
  }
  for (const [name, value] of Object.entries(params.headers ?? {})) headers[name.toLowerCase()] = value
  // The account's credential wins over a header of the same name, and is sent once.
  for (const name of Object.keys(parts.headers)) delete headers[name]
  let body: string | undefined
  if (params.body !== undefined && !BODILESS.has(params.method)) {
    if (typeof params.body === 'string' && headers['content-type']) body = params.body
    else {
      body = JSON.stringify(params.body)
      headers['content-type'] ??= 'application/json'
    }
  }

  const timeoutMs = params.timeout_ms ?? deps.config.tools.timeoutMs
  const method: HttpMethod = params.method
  let response: ToolHttpResponse
  try {
    response = await sendToolRequest(
      { method, url, headers, credentialHeaders: parts.headers, body },
      { ...deps.config.tools, timeoutMs },
      context.signal,
    )
  } catch (error) {
    throw failure(error, url, timeoutMs, forms)
  }
  const output = {
    status: response.status,
    headers: Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, scrub(value, forms)])),
    body: method === 'HEAD' ? null : readBody(response, params.response_format, forms),
  }
  if (response.status >= 400) {
    const said = excerpt(output.body)
    const message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''} from ${response.url.host}${said ? `: ${said}` : ''}`
    // 5xx, 408 and 429 are the answers a later attempt can change; other 4xx are the request's fault.
    const retryable = response.status >= 500 || response.status === 408 || response.status === 429
    throw new NodeError('http_status', scrub(message, forms), retryable)
  }
  return { output }
}

/** The body as `format` asks: parsed JSON, text, or (auto) whichever the answer is. */
function readBody(response: ToolHttpResponse, format: THttpParams['response_format'], forms: string[]): unknown {
  if (format === 'auto') return parseBody(response, forms)
  if (response.body.length === 0) return format === 'json' ? null : ''
  const raw = bodyText(response)
  if (raw === null) {
    if (format === 'text') return `[binary answer: ${response.contentType || 'no content type'}, ${response.body.length} bytes]`
    throw new NodeError('invalid_response', `${response.url.host} answered a binary body, not JSON`, false)
  }
  const text = scrub(raw, forms)
  if (format === 'text') return text
  try {
    return JSON.parse(text)
  } catch {
    throw new NodeError('invalid_response', `${response.url.host} answered a body that is not JSON`, false)
  }
}

/** A transport failure as a NodeError; messages name the host, never a header, query or body. */
function failure(error: unknown, url: URL, timeoutMs: number, forms: string[]): NodeError {
  if (!(error instanceof ToolHttpError)) return new NodeError('network', `The request to ${url.host} failed`)
  const message = scrub(error.message, forms)
  switch (error.reason) {
    case 'timeout':
      return new NodeError('timeout', `${url.host} did not answer within ${timeoutMs} ms`)
    case 'too_large':
      return new NodeError('too_large', message)
    case 'cancelled':
      return new NodeError('canceled', 'The request was canceled', false)
    case 'refused':
    case 'redirect':
      // Retrying cannot change which addresses and redirects are allowed.
      return new NodeError('network', message, false)
    default:
      return new NodeError('network', message)
  }
}

/**
 * The opened credential of account `uuid`: null when its provider's scheme is `none` or it holds
 * no secret.
 * @throws NodeError `invalid_parameters` when the execution's user cannot use such an account in
 *   the workflow's workspace (another workspace's account included), `credential_unavailable`
 *   when its secret cannot be opened (its key is gone).
 */
async function accountCredential(context: NodeContext<THttpParams>, uuid: string): Promise<Credential | null> {
  let answer: AccountCredentialAnswer
  try {
    answer = await context.services.accountCredential(context.actor, uuid)
  } catch (error) {
    if (!(error instanceof SecretUnavailableError)) throw error
    throw new NodeError('credential_unavailable', `The secret of account ${uuid} cannot be opened (its key is not configured)`, false)
  }
  if (!answer.usable) {
    throw new NodeError('invalid_parameters', `account_uuid: no account ${uuid} the workflow may use in its workspace`, false)
  }
  return answer.credential
}
