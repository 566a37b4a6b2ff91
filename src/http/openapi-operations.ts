/**
 * What the OpenAPI document says of each operation beyond its schemas (docs/api/conventions.md,
 * "The OpenAPI document"): the request headers the service reads, the response header every
 * answer carries, a description a reader can act on, bodies that may be left out, one template
 * per path, and object schemas a client generator can type. Used by ./openapi-document.ts.
 */
import type { OpenAPIObject } from 'trpc-to-openapi'
import type { Meta } from '../trpc/init.ts'

type Paths = NonNullable<OpenAPIObject['paths']>
type Components = NonNullable<OpenAPIObject['components']>
type Operation = Paths[string]['get'] & object
type Schema = Record<string, unknown>

/** How a procedure is built, as far as the document is concerned. */
export interface ProcedureFacts {
  meta: Meta
  /** Resolves a workspace context (src/access/workspace-access.ts): reads X-Workspace-UUID. */
  workspace: boolean
  /** Answers through the metrics cache (src/trpc/cache.ts): reads Cache-Control. */
  cached: boolean
}

/** The reusable header parameters and response headers, referenced from the operations. */
export const COMPONENT_PARAMETERS: NonNullable<Components['parameters']> = {
  ServiceAuthorization: {
    name: 'X-Service-Authorization',
    in: 'header',
    required: false,
    description:
      'A trusted service\'s key (docs/api/authentication.md, "Service keys"): the request is scoped to that service\'s ' +
      'users and workspaces. An empty value is ignored; an unknown key is a 401, on public operations too.',
    schema: { type: 'string' },
  },
  WorkspaceUuid: {
    name: 'X-Workspace-UUID',
    in: 'header',
    required: false,
    description:
      'The workspace to act in (docs/api/tenancy.md). Without it, the body or query `workspace_uuid`, else the ' +
      "token's workspace, else the caller's primary workspace. A malformed uuid is a 400; a workspace the caller " +
      'is no member of a 404.',
    schema: { type: 'string', format: 'uuid' },
  },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      '1..255 printable ASCII characters (docs/api/conventions.md, "Idempotency keys"): the answer is kept 24 hours and a retry ' +
      'with the same key and body answers it again (`Idempotent-Replayed: true`) without doing anything twice; another body ' +
      'is a 422, a retry while the first is processed a 409. A malformed key is a 400.',
    schema: { type: 'string', minLength: 1, maxLength: 255 },
  },
  CacheControl: {
    name: 'Cache-Control',
    in: 'header',
    required: false,
    description: '`no-cache` computes the answer afresh (and stores it) instead of answering a cached one of the last 5 minutes.',
    schema: { type: 'string', examples: ['no-cache'] },
  },
}

export const COMPONENT_HEADERS: NonNullable<Components['headers']> = {
  RequestId: {
    description: "The request's id (a well-formed X-Request-Id sent with the request, else a new one); `request_id` of an error body.",
    schema: { type: 'string' },
  },
  RunUuid: {
    description: 'On an event stream answer only: the run streamed, to resume with `GET /api/v1/runs/{run_uuid}/events` and Last-Event-ID.',
    schema: { type: 'string', format: 'uuid' },
  },
  ThreadUuid: {
    description: "On an event stream answer of a run in a thread only: the run's thread, to continue the conversation.",
    schema: { type: 'string', format: 'uuid' },
  },
}

const ref = (kind: 'parameters' | 'headers', name: string) => ({ $ref: `#/components/${kind}/${name}` })

/** Declares the request headers a procedure reads (see {@link COMPONENT_PARAMETERS}). */
export function declareRequestHeaders(op: Operation, facts: ProcedureFacts, method: string): void {
  const headers = [
    ...(method === 'post' ? [ref('parameters', 'IdempotencyKey')] : []),
    // Every procedure starts by resolving the service scope (src/trpc/init.ts).
    ref('parameters', 'ServiceAuthorization'),
    ...(facts.workspace ? [ref('parameters', 'WorkspaceUuid')] : []),
    ...(facts.cached ? [ref('parameters', 'CacheControl')] : []),
  ]
  op.parameters = [...(op.parameters ?? []), ...headers]
}

/** Every answer, success or error, carries X-Request-Id (src/http/app.ts sets it on every reply). */
export function declareRequestIdHeader(op: Operation): void {
  for (const response of Object.values(op.responses ?? {})) {
    if ('$ref' in response) continue
    response.headers = { 'X-Request-Id': ref('headers', 'RequestId'), ...response.headers }
  }
}

/** The sentences of an operation's description that follow from how its procedure is built. */
function factSentences(method: string, facts: ProcedureFacts): string[] {
  const { meta } = facts
  const sentences: string[] = []
  if (meta.openapi?.protect === false) sentences.push('Public: no token needed.')
  else if (method === 'get' || meta.readOnlyAllowed) sentences.push('Needs a bearer token; a read-only token may call it.')
  else sentences.push('Needs a bearer token that may write; a read-only token is refused (403).')
  if (facts.workspace)
    sentences.push('Acts in the workspace of X-Workspace-UUID, `workspace_uuid` or the token, of which the caller must be a member.')
  if (facts.cached)
    sentences.push('Answers are cached 5 minutes per caller and parameters (`cached_at`); `Cache-Control: no-cache` recomputes.')
  if (meta.successStatus === 201) sentences.push('Answers 201 with what it created.')
  if (meta.successStatus === 202) sentences.push('Answers 202: the work goes on in the background.')
  if (meta.successStatus === 204) sentences.push('Answers 204 with no body.')
  if (meta.backgroundStatus) sentences.push('With `background: true` it answers 202 at once and the work goes on; otherwise 200 when done.')
  if (meta.runEventStream) {
    sentences.push(
      "With `Accept: text/event-stream` (or `stream: true`) it answers 200 with the run's events as Server-Sent Events, as `GET /api/v1/runs/{run_uuid}/events` sends them, once the run has started; refusals before that are JSON.",
    )
  }
  if (meta.callsModel) {
    sentences.push(
      'Waits for a language model: 429 when a budget of the workspace, agent, user or access token blocks it (Retry-After: the end of its period), 502 when its provider fails, 504 when it does not answer in time.',
    )
  }
  if (meta.rateLimited) sentences.push('Rate limited: 429 with Retry-After.')
  return sentences
}

/**
 * The operation's description: the procedure's own `openapi.description` where its summary is
 * not enough, else the summary, then what a caller needs to know (see {@link factSentences}).
 */
export function describeOperation(op: Operation, method: string, facts: ProcedureFacts): void {
  const lead = facts.meta.openapi?.description ?? op.summary ?? ''
  op.description = [lead.endsWith('.') || lead === '' ? lead : `${lead}.`, ...factSentences(method, facts)].filter(Boolean).join(' ')
}

/** Whether a JSON object schema (resolved through `components.schemas`) requires any property. */
function requiresSomething(schema: unknown, schemas: Record<string, unknown>): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  const resolved = '$ref' in schema && typeof schema.$ref === 'string' ? schemas[schema.$ref.replace('#/components/schemas/', '')] : schema
  if (typeof resolved !== 'object' || resolved === null) return false
  return 'required' in resolved && Array.isArray(resolved.required) && resolved.required.length > 0
}

/**
 * A JSON body with no required property may be left out: src/http/rest.plugin.ts reads a
 * bodiless request without Content-Type as `{}` (logout, favourite, cancel, retry, ...).
 */
export function relaxOptionalBody(op: Operation, schemas: Record<string, unknown>): void {
  const body = op.requestBody
  if (!body || '$ref' in body) return
  const json = body.content['application/json']
  if (json && !requiresSomething(json.schema, schemas)) body.required = false
}

/** A path with its parameters' names left out: templates with the same shape are one path to a client. */
const shapeOf = (template: string) => template.replace(/\{\w+\}/g, '{}')

/** The parameter names of a template, in order. */
const namesOf = (template: string) => [...template.matchAll(/\{(\w+)\}/g)].map((match) => match[1])

/**
 * Templates that differ only in their parameters' names (`/large-language-models/{model}` and
 * `/{model_uuid}`) are one path to OpenAPI tools, so they become the one that came first (the
 * retrieve's, declared before update and delete). Only the document's name changes: each
 * operation keeps its parameter's schema (a uuid for update and delete), and the REST surface
 * still reads the value at that position, whatever the template calls it.
 */
export function mergeIdenticalPaths(doc: OpenAPIObject): void {
  const first = new Map<string, string>()
  for (const template of Object.keys(doc.paths ?? {})) {
    const kept = first.get(shapeOf(template))
    if (!kept) {
      first.set(shapeOf(template), template)
      continue
    }
    const paths = doc.paths as Paths
    const renamed = new Map(namesOf(template).map((name, index) => [name, namesOf(kept)[index]]))
    for (const [method, op] of Object.entries(paths[template])) {
      if (typeof op !== 'object' || op === null || !('responses' in op)) continue
      for (const parameter of (op as Operation).parameters ?? []) {
        if ('$ref' in parameter || parameter.in !== 'path' || !renamed.has(parameter.name)) continue
        const note = `Named \`${parameter.name}\` in the tRPC input and in error issues.`
        parameter.description = parameter.description ? `${parameter.description} ${note}` : note
        // The name a 400's issues give, for tools that match issues to parameters.
        parameter['x-input-name'] = parameter.name
        parameter.name = renamed.get(parameter.name) as string
      }
      ;(paths[kept] as Record<string, unknown>)[method] = op
    }
    delete paths[template]
  }
}

/** Whether an index signature of `extra`'s type holds `property` (both plain types, the same). */
const fits = (property: unknown, extra: object) =>
  typeof property === 'object' &&
  property !== null &&
  'type' in property &&
  'type' in extra &&
  JSON.stringify(property.type) === JSON.stringify(extra.type)

/**
 * An object schema with named properties and `additionalProperties` for the other keys
 * (metadata: named fields plus extra string keys) says the same with `unevaluatedProperties`
 * when nothing else evaluates its properties; generators such as openapi-typescript type the
 * former as an index signature every named property must fit (`metadata.input`, a list, cannot
 * be a string), and leave the latter out of the type. Objects whose named properties all fit the
 * extra keys' type keep `additionalProperties`. Accepted and answered values are the same.
 */
export function typeableExtraProperties(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(typeableExtraProperties)
  if (typeof node !== 'object' || node === null) return
  const schema = node as Schema
  const extra = schema.additionalProperties
  const applicators = ['allOf', 'anyOf', 'oneOf', 'if', '$ref', 'patternProperties', 'dependentSchemas']
  if (
    typeof schema.properties === 'object' &&
    typeof extra === 'object' &&
    extra !== null &&
    Object.keys(extra).length > 0 &&
    !applicators.some((key) => key in schema) &&
    Object.values(schema.properties ?? {}).some((property) => !fits(property, extra))
  ) {
    schema.unevaluatedProperties = extra
    delete schema.additionalProperties
  }
  for (const value of Object.values(schema)) typeableExtraProperties(value)
}

/**
 * A closed tuple (`prefixItems` with `items: false` and as many `maxItems`, as zod writes
 * `z.tuple`) gets an `items` schema in place of `false`: the item schemas it already has (their
 * `anyOf` when they differ). `maxItems` still allows no more items, so the same values are valid,
 * and linters that want an `items` schema beside `type: array` (Spectral's `array-items`, which
 * fails on `false`) and generators that skip `prefixItems` read it.
 */
export function itemsOfClosedTuples(node: unknown): void {
  if (Array.isArray(node)) return node.forEach(itemsOfClosedTuples)
  if (typeof node !== 'object' || node === null) return
  const schema = node as Schema & { prefixItems?: unknown[]; items?: unknown; maxItems?: number }
  if (Array.isArray(schema.prefixItems) && schema.items === false && schema.maxItems === schema.prefixItems.length) {
    const distinct = [...new Map(schema.prefixItems.map((item) => [JSON.stringify(item), item])).values()]
    schema.items = distinct.length === 1 ? distinct[0] : { anyOf: distinct }
  }
  for (const value of Object.values(schema)) itemsOfClosedTuples(value)
}
