/**
 * Bad-input fuzzing of the REST surface, driven by the OpenAPI document the server serves: every
 * operation found there gets malformed and mistyped bodies, odd query strings and path
 * parameters, wrong content types and bad credentials, so endpoints added later are covered too.
 * Used by test/fuzz-bad-input.test.ts.
 */
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc'
import { isRecord } from '../../src/access/wire.ts'

/** The part of JSON Schema (OpenAPI 3.1) the generator reads. */
export interface JsonSchema {
  $ref?: string
  type?: string | string[]
  format?: string
  pattern?: string
  enum?: unknown[]
  const?: unknown
  anyOf?: JsonSchema[]
  oneOf?: JsonSchema[]
  allOf?: JsonSchema[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  items?: JsonSchema
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  minItems?: number
  maxItems?: number
}

interface OpenApiParameter {
  in: string
  name: string
  /** The input's name where the template's differs (src/http/openapi-operations.ts, mergeIdenticalPaths). */
  'x-input-name'?: string
  required?: boolean
  schema?: JsonSchema
}

interface OpenApiOperation {
  operationId?: string
  security?: unknown[]
  parameters?: OpenApiParameter[]
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> }
  responses?: Record<string, { content?: Record<string, unknown> }>
}

/** The OpenAPI document as far as the generator reads it. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>
  components?: { schemas?: Record<string, JsonSchema> }
}

/** One REST operation of the document. */
export interface Operation {
  id: string
  method: string
  /** The templated path, `/api/v1/workspaces/{workspace_uuid}`. */
  path: string
  /** Whether the document says a bearer token is required (`security`). */
  protected: boolean
  /** `name` in the template; `input` in the procedure's input and its issues. */
  pathParams: { name: string; input: string; schema: JsonSchema }[]
  queryParams: { name: string; schema: JsonSchema; required: boolean }[]
  /** The JSON request body schema, resolved; undefined for GET and DELETE. */
  body: JsonSchema | undefined
}

/** One request of the batch and what its answer must be. */
export interface FuzzCase {
  label: string
  method: string
  /** Path and query, already encoded: sent byte for byte (no client-side normalisation). */
  url: string
  headers: Record<string, string>
  body?: string | Buffer
  /** The statuses allowed; any 4xx when omitted. */
  status?: number[]
  /** A field (path) the issues of a 400 must name. */
  field?: (string | number)[]
  /** The input may be genuinely valid (odd but legal text): a 2xx is fine, a 5xx never. */
  mayBeValid?: boolean
}

/** A response, read raw. */
export interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  json: unknown
  /** A network error before any response. */
  error?: string
}

const TRPC_CODES = new Set(Object.keys(TRPC_ERROR_CODES_BY_KEY))

/** Resolves `$ref`s against the document's components. */
export function resolver(doc: OpenApiDocument) {
  const resolve = (schema: JsonSchema | undefined): JsonSchema => {
    if (!schema) return {}
    if (schema.$ref) {
      const name = schema.$ref.replace('#/components/schemas/', '')
      return resolve(doc.components?.schemas?.[name])
    }
    return schema
  }
  return resolve
}

/** Every REST operation of the document. */
export function operationsOf(doc: OpenApiDocument): Operation[] {
  const resolve = resolver(doc)
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [verb, operation] of Object.entries(item)) {
      const method = verb.toUpperCase()
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue
      // Uploads (multipart) and file downloads are not JSON operations; test/media.test.ts covers them.
      if (operation.requestBody && !operation.requestBody.content?.['application/json']) continue
      if (method === 'GET' && operation.responses?.['200'] && !operation.responses['200'].content?.['application/json']) continue
      // Redirects (single sign-on's round trip through the provider) are browser navigations; test/sso.test.ts covers them.
      if (method === 'GET' && !operation.responses?.['200'] && operation.responses?.['302']) continue
      const params = operation.parameters ?? []
      operations.push({
        id: operation.operationId ?? `${method} ${path}`,
        method,
        path,
        protected: (operation.security?.length ?? 0) > 0,
        pathParams: params
          .filter((p) => p.in === 'path')
          .map((p) => ({ name: p.name, input: p['x-input-name'] ?? p.name, schema: resolve(p.schema) })),
        queryParams: params.filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: resolve(p.schema), required: p.required === true })),
        body: operation.requestBody ? resolve(operation.requestBody.content?.['application/json']?.schema) : undefined,
      })
    }
  }
  return operations
}

/** The JSON types a schema accepts (`integer` implies nothing about `number`). */
export function typesOf(schema: JsonSchema, resolve: (s: JsonSchema | undefined) => JsonSchema): Set<string> {
  const s = resolve(schema)
  const types = new Set<string>()
  if (typeof s.type === 'string') types.add(s.type)
  if (Array.isArray(s.type)) for (const type of s.type) types.add(type)
  for (const branch of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) for (const type of typesOf(branch, resolve)) types.add(type)
  for (const value of s.enum ?? (s.const !== undefined ? [s.const] : [])) types.add(value === null ? 'null' : typeof value)
  if (!types.size && s.properties) types.add('object')
  return types
}

/** The non-null branch of a nullable schema (`anyOf: [X, {type: null}]`), resolved. */
export function primary(schema: JsonSchema, resolve: (s: JsonSchema | undefined) => JsonSchema): JsonSchema {
  const s = resolve(schema)
  const branches = [...(s.anyOf ?? []), ...(s.oneOf ?? [])].map(resolve).filter((b) => b.type !== 'null')
  return branches.length ? branches[0] : s
}

/** Whether a JSON value is of one of the accepted types. */
export function accepts(types: Set<string>, value: unknown): boolean {
  if (value === null) return types.has('null')
  if (Array.isArray(value)) return types.has('array')
  if (typeof value === 'number') return types.has('number') || (types.has('integer') && Number.isInteger(value))
  return types.has(typeof value)
}

/** Sets `value` at `path` in a deep copy of `body`, creating objects and arrays on the way. */
export function setAt(body: Record<string, unknown>, path: (string | number)[], value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = structuredClone(body)
  let node: Record<string | number, unknown> = copy
  for (let i = 0; i < path.length - 1; i += 1) {
    const key = path[i]
    const next = node[key]
    if (typeof next !== 'object' || next === null) node[key] = typeof path[i + 1] === 'number' ? [] : {}
    node = node[key] as Record<string | number, unknown>
  }
  node[path[path.length - 1]] = value
  return copy
}

/** JSON text of `body` with the value at `path` written as raw JSON text (`1e309`, `-0`). */
export function withRaw(body: Record<string, unknown>, path: (string | number)[], raw: string): string {
  const mark = `__raw_${randomUUID()}__`
  return JSON.stringify(setAt(body, path, mark)).replace(JSON.stringify(mark), raw)
}

/** `depth` levels of nesting: `{"a":{"a":...1}}` or `[[...1]]`. */
export function nested(depth: number, kind: 'object' | 'array'): string {
  return kind === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + '1' + ']'.repeat(depth)
}

/**
 * Sends one request over a raw socket, so paths such as `/../..` and `%zz` reach the server as
 * written and no Content-Type is added behind our back.
 */
export async function rawRequest(
  agent: http.Agent,
  base: string,
  c: Pick<FuzzCase, 'method' | 'url' | 'headers' | 'body'>,
): Promise<RawResponse> {
  const first = await sendOnce(agent, base, c)
  // A reset before any answer means the server never read the request: once more, on a new socket.
  return first.error && /ECONNRESET|EPIPE/.test(first.error) ? sendOnce(agent, base, c) : first
}

function sendOnce(agent: http.Agent, base: string, c: Pick<FuzzCase, 'method' | 'url' | 'headers' | 'body'>): Promise<RawResponse> {
  const target = new URL(base)
  return new Promise((resolve) => {
    let settled = false
    const done = (response: RawResponse) => {
      if (!settled) resolve(response)
      settled = true
    }
    const headers: Record<string, string | number> = { ...c.headers }
    if (c.body !== undefined) headers['content-length'] = Buffer.byteLength(c.body)
    const req = http.request(
      { host: target.hostname, port: target.port, method: c.method, path: c.url, headers, agent, timeout: 30_000 },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('error', (error) => done({ status: 0, headers: {}, text: '', json: undefined, error: String(error) }))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let json: unknown
          try {
            json = JSON.parse(text)
          } catch {
            json = undefined
          }
          done({ status: res.statusCode ?? 0, headers: res.headers, text, json })
        })
      },
    )
    // The server may answer (413) and close before the whole body is written: keep its answer.
    req.on('error', (error) => setTimeout(() => done({ status: 0, headers: {}, text: '', json: undefined, error: String(error) }), 200))
    req.on('timeout', () => req.destroy(new Error('timed out')))
    req.end(c.body)
  })
}

/** Runs `tasks` with at most `limit` in flight. */
export async function pool<T, R>(items: T[], limit: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next
      next += 1
      results[index] = await task(items[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return results
}

/** Whether a 400's issues name `field`: an issue at or under it, or an unrecognized key of its parent. */
export function issuesName(issues: unknown[], field: (string | number)[]): boolean {
  return issues.some((issue) => {
    if (!isRecord(issue) || !Array.isArray(issue.path)) return false
    const path = issue.path.map(String)
    const want = field.map(String)
    if (want.every((key, i) => path[i] === key)) return true
    const parent = want.slice(0, -1)
    return (
      Array.isArray(issue.keys) &&
      issue.keys.map(String).includes(want[want.length - 1]) &&
      path.length === parent.length &&
      parent.every((key, i) => path[i] === key)
    )
  })
}

/** What is wrong with the answer to `c`, if anything (empty when it is right). */
export function problemsOf(c: FuzzCase, res: RawResponse): string[] {
  if (res.error) return [`no response: ${res.error}`]
  const problems: string[] = []
  const { status } = res
  if (status >= 500) problems.push(`server error ${status}`)
  else if (c.status && !c.status.includes(status)) problems.push(`status ${status}, expected ${c.status.join(' or ')}`)
  else if (!c.status && !c.mayBeValid && (status < 400 || status >= 500)) problems.push(`status ${status}, expected a 4xx`)
  if (status < 400 && c.mayBeValid) return problems
  if (status < 400) return problems
  if (status === 405 && !res.headers.allow) problems.push('405 without Allow')
  const contentType = String(res.headers['content-type'] ?? '')
  if (!contentType.startsWith('application/json')) problems.push(`content-type "${contentType}"`)
  const body = res.json
  if (!isRecord(body)) return [...problems, 'body is not a JSON object']
  if (typeof body.message !== 'string' || !body.message) problems.push('no string `message`')
  if (typeof body.code !== 'string' || !TRPC_CODES.has(body.code)) problems.push(`\`code\` ${JSON.stringify(body.code)} is not a tRPC code`)
  if ('stack' in body || /node_modules|\.[mc]?[jt]s:\d+/.test(res.text)) problems.push('leaks a stack trace')
  const requestId = res.headers['x-request-id']
  if (requestId && body.request_id !== requestId)
    problems.push(`request_id ${JSON.stringify(body.request_id)} != X-Request-Id ${requestId}`)
  if (status === 400 && body.message === 'Input validation failed' && !Array.isArray(body.issues))
    problems.push('validation error without `issues`')
  if (status === 400 && c.field) {
    if (!Array.isArray(body.issues)) problems.push(`no \`issues\` naming ${c.field.join('.')}`)
    else if (!issuesName(body.issues, c.field)) problems.push(`\`issues\` do not name ${c.field.join('.')}`)
  }
  return problems
}
