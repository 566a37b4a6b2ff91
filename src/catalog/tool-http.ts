/**
 * The HTTP transport of `api` tools: one request over
 * node:http(s) with a whole-call deadline (TOOL_TIMEOUT_MS, redirects and body included), a
 * response-size cap that stops reading as soon as it is passed (TOOL_MAX_RESPONSE_BYTES, counted
 * after decompression), at most {@link MAX_REDIRECTS} redirects, and the private-address rule:
 * unless TOOL_ALLOW_PRIVATE_NETWORK is on, every connection (the first and each redirect's) goes
 * through request-filtering-agent, which refuses loopback, private, link-local, unspecified and
 * other non-unicast addresses when the socket connects, after DNS (so `localhost`, IPv6 literals,
 * IPv4-mapped IPv6 and names that resolve to such addresses are all refused).
 *
 * Errors are {@link ToolHttpError}s whose messages name the host and what went wrong; they never
 * hold a header, a query string or a body (where credentials travel).
 */
import http from 'node:http'
import https from 'node:https'
import type { Readable } from 'node:stream'
import zlib from 'node:zlib'
import { RequestFilteringHttpAgent, RequestFilteringHttpsAgent } from 'request-filtering-agent'
import type { ToolMethod } from '../../entities/index.ts'
import { traceHeaders } from '../platform/tracing.ts'

/** Most redirects one tool call follows; each target is checked again. */
export const MAX_REDIRECTS = 3

/** The methods a request may use: the tools' own, and HEAD for workflow HTTP request nodes. */
export type HttpMethod = ToolMethod | 'HEAD'

/** A tool request, ready to send. */
export interface ToolHttpRequest {
  method: HttpMethod
  url: URL
  /** Headers sent on every hop. */
  headers: Record<string, string>
  /** Credential headers: sent to the first URL's origin only, dropped on a redirect to another origin. */
  credentialHeaders: Record<string, string>
  /** JSON text (POST, PUT, PATCH). */
  body?: string
}

/** What bounds a tool request (`config.tools`). */
export interface ToolHttpLimits {
  timeoutMs: number
  maxResponseBytes: number
  allowPrivateNetwork: boolean
  /**
   * Addresses (IPs or CIDRs) allowed even when private addresses are refused. Not configurable:
   * tests use it to reach one loopback server while checking that others are refused.
   */
  allowAddresses?: readonly string[]
  /** Follow redirects (default true); false answers a 3xx as it is (outbound webhooks). */
  followRedirects?: boolean
  /**
   * Follow only redirects to the first URL's origin (default false): another origin fails the
   * request with reason `redirect` (a crawl of a site stays on its site).
   */
  sameOriginRedirects?: boolean
}

/** The final answer of a tool request (after redirects). */
export interface ToolHttpResponse {
  status: number
  statusText: string
  contentType: string
  /** The answer's headers, names in lower case; repeated headers joined with `, `. */
  headers: Record<string, string>
  body: Buffer
  /** The URL that answered. */
  url: URL
}

/**
 * Why a request failed: `timeout` (the whole-call deadline passed), `too_large` (the answer went
 * over the cap), `cancelled` (the caller's signal), `refused` (a private address while they are
 * refused, or a scheme other than http/https), `redirect` (too many or bad redirects), `network`
 * (anything else on the way).
 */
export type ToolHttpFailure = 'timeout' | 'too_large' | 'cancelled' | 'refused' | 'redirect' | 'network'

/** A tool request failed before a complete answer arrived; the message is safe to show and log. */
export class ToolHttpError extends Error {
  override name = 'ToolHttpError'
  constructor(
    message: string,
    /** Lets callers map a failure without reading its message (workflow nodes retry some, not others). */
    readonly reason: ToolHttpFailure = 'network',
  ) {
    super(message)
  }
}

const isHttp = (url: URL) => url.protocol === 'http:' || url.protocol === 'https:'
const REDIRECTS = new Set([301, 302, 303, 307, 308])

/** Agents that refuse non-unicast addresses, and plain ones; no keep-alive (tool calls are rare next to model calls). */
const FILTERING = { http: new RequestFilteringHttpAgent(), https: new RequestFilteringHttpsAgent() }
const PLAIN = { http: new http.Agent(), https: new https.Agent() }

function agentFor(url: URL, limits: ToolHttpLimits): http.Agent {
  const secure = url.protocol === 'https:'
  if (limits.allowPrivateNetwork) return secure ? PLAIN.https : PLAIN.http
  if (limits.allowAddresses?.length) {
    const options = { allowIPAddressList: [...limits.allowAddresses] }
    return secure ? new RequestFilteringHttpsAgent(options) : new RequestFilteringHttpAgent(options)
  }
  return secure ? FILTERING.https : FILTERING.http
}

const isRefusal = (message: string) => /is not allowed\. Because/.test(message)

/** The error of a failed connection or request, its message without anything the request carried. */
function failureOf(error: unknown, url: URL): ToolHttpError {
  if (error instanceof ToolHttpError) return error
  const refused = error instanceof Error && isRefusal(error.message)
  return new ToolHttpError(describeFailure(error, url), refused ? 'refused' : 'network')
}

/** Why a connection or request failed, without anything the request carried. */
function describeFailure(error: unknown, url: URL): string {
  const host = url.host
  const message = error instanceof Error ? error.message : String(error)
  const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : ''
  if (isRefusal(message)) {
    return `Refused: ${host} is (or resolves to) a private, loopback, link-local or unspecified address, and TOOL_ALLOW_PRIVATE_NETWORK is off`
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `Could not resolve the host ${url.hostname}`
  if (code === 'ECONNREFUSED') return `${host} refused the connection`
  if (code === 'ECONNRESET' || message === 'aborted' || code === 'ERR_STREAM_PREMATURE_CLOSE') return `${host} closed the connection before the answer was complete`
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN') return 'The request has a header value HTTP does not allow (check the account secret and auth_parameter)'
  if (/CERT|SSL|TLS|SELF_SIGNED/.test(code)) return `TLS handshake with ${host} failed (${code})`
  if (/^Z_|BROTLI/.test(code)) return `${host} sent a body that does not decompress`
  return `The request to ${host} failed${code ? ` (${code})` : ''}`
}

/** Response headers as one string per lower-case name (node already lower-cases them). */
function headersOf(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return out
}

/** The decoder for a Content-Encoding, or null for identity. */
function decoderFor(encoding: string | undefined): zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | null {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip()
    case 'deflate':
      return zlib.createInflate()
    case 'br':
      return zlib.createBrotliDecompress()
    default:
      return null
  }
}

interface Hop {
  status: number
  statusText: string
  contentType: string
  headers: Record<string, string>
  location?: string
  body: Buffer
}

/** One request/response; the body is read (up to the cap) unless the answer is a redirect. */
function hop(url: URL, method: HttpMethod, headers: Record<string, string>, body: string | undefined, limits: ToolHttpLimits, signal: AbortSignal): Promise<Hop> {
  return new Promise<Hop>((resolve, reject) => {
    const fail = (error: unknown) => reject(failureOf(error, url))
    let request: http.ClientRequest
    try {
      const send = url.protocol === 'https:' ? https.request : http.request
      request = send(url, { method, headers, agent: agentFor(url, limits), signal })
    } catch (error) {
      fail(error)
      return
    }
    request.on('error', fail)
    request.on('response', (response) => {
      const status = response.statusCode ?? 0
      const location = response.headers.location
      const base = {
        status,
        statusText: response.statusMessage ?? '',
        contentType: String(response.headers['content-type'] ?? ''),
        headers: headersOf(response.headers),
      }
      if (REDIRECTS.has(status) && location) {
        response.destroy()
        resolve({ ...base, location, body: Buffer.alloc(0) })
        return
      }
      const tooLarge = () =>
        new ToolHttpError(`The answer of ${url.host} is larger than TOOL_MAX_RESPONSE_BYTES (${limits.maxResponseBytes} bytes): cut off`, 'too_large')
      const declared = Number(response.headers['content-length'])
      if (Number.isFinite(declared) && declared > limits.maxResponseBytes) {
        response.destroy()
        reject(tooLarge())
        return
      }
      const decoder = decoderFor(response.headers['content-encoding'])
      const stream: Readable = decoder ? response.pipe(decoder) : response
      if (decoder) response.on('error', (error) => decoder.destroy(error))
      const chunks: Buffer[] = []
      let size = 0
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length
        if (size > limits.maxResponseBytes) {
          // Stop reading: the socket is closed and nothing more is buffered.
          response.destroy()
          decoder?.destroy()
          reject(tooLarge())
          return
        }
        chunks.push(chunk)
      })
      let ended = false
      stream.on('error', fail)
      stream.on('end', () => {
        ended = true
        resolve({ ...base, body: Buffer.concat(chunks, size) })
      })
      // A connection closed mid-body ends neither with 'end' nor always with 'error'.
      stream.on('close', () => {
        if (!ended) fail(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
      })
    })
    request.end(body)
  })
}

/**
 * Sends a tool request and reads its answer, following up to {@link MAX_REDIRECTS} redirects.
 * 301/302 after a POST and every 303 continue as GET without a body; 307/308 keep the method
 * and body. Credential headers go only to the first URL's origin.
 * @throws ToolHttpError for anything short of a complete answer (refused address, timeout,
 *   cancellation, connection trouble, too large an answer, too many or bad redirects).
 */
export async function sendToolRequest(request: ToolHttpRequest, limits: ToolHttpLimits, signal?: AbortSignal): Promise<ToolHttpResponse> {
  if (signal?.aborted) throw new ToolHttpError('The tool call was cancelled', 'cancelled')
  const deadline = AbortSignal.timeout(limits.timeoutMs)
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline
  const origin = request.url.origin
  let url = request.url
  let method = request.method
  let body = request.body
  // The caller's trace context last: a configured `traceparent` would break the trace (docs/operations.md, "Traces").
  let headers = { ...request.headers, ...request.credentialHeaders, ...traceHeaders() }
  for (let redirects = 0; ; redirects += 1) {
    if (!isHttp(url)) throw new ToolHttpError(`Only http and https URLs are called (got ${url.protocol})`, 'refused')
    let answer: Hop
    try {
      answer = await hop(url, method, headers, body, limits, combined)
    } catch (error) {
      if (deadline.aborted) throw new ToolHttpError(`${url.host} did not answer within TOOL_TIMEOUT_MS (${limits.timeoutMs} ms)`, 'timeout')
      if (signal?.aborted) throw new ToolHttpError('The tool call was cancelled', 'cancelled')
      throw failureOf(error, url)
    }
    if (answer.location === undefined || limits.followRedirects === false) return { ...answer, url }
    if (redirects >= MAX_REDIRECTS) throw new ToolHttpError(`${request.url.host} redirected more than ${MAX_REDIRECTS} times`, 'redirect')
    let next: URL
    try {
      next = new URL(answer.location, url)
    } catch {
      throw new ToolHttpError(`${url.host} redirected to an invalid URL`, 'redirect')
    }
    if (!isHttp(next)) throw new ToolHttpError(`${url.host} redirected to a ${next.protocol} URL: only http and https are followed`, 'redirect')
    if (limits.sameOriginRedirects && next.origin !== origin) {
      throw new ToolHttpError(`${url.host} redirected to another origin (${next.host}): not followed`, 'redirect')
    }
    if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method === 'POST')) {
      method = 'GET'
      body = undefined
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== 'content-type'))
    }
    if (next.origin !== origin) {
      const credentialNames = new Set(Object.keys(request.credentialHeaders).map((name) => name.toLowerCase()))
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !credentialNames.has(name.toLowerCase())))
    }
    url = next
  }
}
