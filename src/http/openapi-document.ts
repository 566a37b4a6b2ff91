/**
 * The OpenAPI 3.1 document of `GET /openapi.json` (docs/api/conventions.md, "The OpenAPI
 * document"): trpc-to-openapi generates it from the routers and the plain routes beside them;
 * this file then makes it say what the service answers. trpc-to-openapi declares every success
 * as a 200 and errors in shapes of its own; here each operation gets its real success status
 * (the procedure's `successStatus` and `backgroundStatus` meta, src/trpc/init.ts), the error
 * statuses it can answer with the one error body of src/http/errors.ts, its security, and the
 * document its license, servers and tag descriptions.
 */
import { forEachOpenApiProcedure, generateOpenApiDocument, type OpenAPIObject } from 'trpc-to-openapi'
import { appRouter } from '../../routers/index.ts'
import { cachedWorkspaceProcedure } from '../trpc/cache.ts'
import { workspaceProcedure, type Meta } from '../trpc/init.ts'
import { MEDIA_OPENAPI_PATHS } from './media.routes.ts'
import { describeService, errorExample } from './openapi-examples.ts'
import { pathAliases } from './path-aliases.ts'
import { RUN_EVENTS_OPENAPI_PATHS } from './run-events.routes.ts'
import { WEBHOOK_OPENAPI_PATHS } from './webhook.routes.ts'
import { AUDIT_EXPORT_OPENAPI_PATHS } from './audit-export.routes.ts'
import { SSO_OPENAPI_PATHS } from './sso.routes.ts'
import { A2A_OPENAPI_PATHS } from './a2a.routes.ts'
import {
  COMPONENT_HEADERS,
  COMPONENT_PARAMETERS,
  declareRequestHeaders,
  declareRequestIdHeader,
  describeOperation,
  mergeIdenticalPaths,
  relaxOptionalBody,
  typeableExtraProperties,
  itemsOfClosedTuples,
  type ProcedureFacts,
} from './openapi-operations.ts'

type Operation = NonNullable<OpenAPIObject['paths']>[string]['get'] & object
type Responses = NonNullable<Operation['responses']>
type Schema = Record<string, unknown>

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/** Every tag the operations use, with what it groups. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  System: 'Liveness of the API process (no database).',
  Authentication: 'Sign-up, sign-in, single sign-on and logout (docs/api/authentication.md, docs/api/sso.md).',
  User: 'The signed-in user and their current token.',
  'Access tokens': "The caller's personal access tokens; a read-only token may only read.",
  Workspaces: 'Workspaces, their members and their metrics (docs/api/tenancy.md).',
  Providers: 'Language model providers: the built-in ones (read-only) and custom ones.',
  Accounts: 'Provider accounts holding encrypted secrets.',
  'Large language models': 'Models of the providers; custom models on custom providers.',
  Tools: 'HTTP tools agents can call.',
  Agents: 'Agents: configuration, sharing, favourites, generation, the leaderboard and runs.',
  Prompts: 'Reusable prompts and their runs.',
  Workflows: 'Workflow graphs: storing, sharing, generating, running, and their webhooks.',
  'Workflow executions': 'Executions of workflows: reading, cancelling, retrying.',
  Categories: 'Categories of agents and workflows.',
  Threads: 'Conversations with an agent, and their runs.',
  Messages: 'The messages of threads.',
  Memories: 'What agents remember about users.',
  Runs: 'Runs of agents, threads and prompts: their state, events and cancellation (docs/api/runs.md).',
  Knowledge: 'Documents an agent is trained on, and searching them (docs/api/knowledge.md).',
  'Command room': 'Tasks that run an agent or a workflow once or on a schedule (docs/api/command-room.md).',
  Metrics: 'Counts and sums over time of agents, workflows, executions, threads and messages (docs/api/metrics.md).',
  Media: 'Uploads and their downloads.',
  A2A: "Each agent the caller may run as an A2A (Agent2Agent 0.3) agent: its card and its JSON-RPC endpoint (docs/api/a2a.md).",
  Datasets: 'Datasets of cases to evaluate against: inputs, expected outputs and metadata, added as JSON or JSONL uploads (docs/api/evaluations.md).',
  Audit: 'The audit log: every change, who made it, from where, and what it changed (docs/api/audit.md).',
}

const issueSchema: Schema = {
  type: 'object',
  description: "One problem with the input: zod's issue, or a service's own check in the same shape.",
  properties: {
    path: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Where in the input, as keys and indexes.' },
    message: { type: 'string' },
    code: { type: 'string', description: "zod's issue code (`custom` for a service's own check)." },
  },
  required: ['path', 'message'],
  additionalProperties: true,
}

/** The one error body of every route (src/http/errors.ts `errorBody`, src/http/rest-handler.ts `errorBodyOf`). */
const errorSchema: Schema = {
  type: 'object',
  description: 'Every error answer, on every route (docs/api/conventions.md, "Errors").',
  properties: {
    code: { type: 'string', description: 'The tRPC error code, which fixes the status.', examples: ['BAD_REQUEST', 'NOT_FOUND'] },
    message: { type: 'string', description: 'What went wrong; `Internal server error` for a 500.' },
    issues: { type: 'array', items: { $ref: '#/components/schemas/ErrorIssue' }, description: 'Present on validation errors.' },
    request_id: { type: 'string', description: 'The X-Request-Id response header of the same answer.' },
  },
  required: ['code', 'message', 'request_id'],
  additionalProperties: false,
}

const retryAfter = { 'Retry-After': { description: 'Seconds to wait before sending the request again.', schema: { type: 'integer' } } }

/** Each declared error status: when it is answered, and its headers. */
const ERRORS: Record<number, { description: string; headers?: typeof retryAfter }> = {
  400: { description: 'The input fails its schema or a service check (`issues` names the field), or the body is no JSON object' },
  401: { description: 'Missing, unknown, expired or revoked token, or an unknown service key' },
  403: {
    description: 'The caller sees the resource but may not do this to it (a read share, a read-only token), or the server turned this off',
  },
  404: { description: 'No such resource or workspace, or one the caller may not see' },
  409: { description: 'A state conflict, or a unique value already taken' },
  413: { description: 'The body is over its limit' },
  415: { description: 'The body is not of the accepted content type' },
  422: { description: 'The Idempotency-Key was used with another request body' },
  429: { description: 'Rate limited, or over a budget', headers: retryAfter },
  500: { description: 'A server fault; the message carries no details' },
  502: { description: "The language model's provider failed" },
  503: { description: 'The database cannot be reached in time, or the process is shutting down', headers: retryAfter },
  504: { description: 'The language model did not answer in time (LLM_TIMEOUT_MS)' },
}

/** The first middleware of a procedure: the one its kind starts with (src/trpc/init.ts, src/trpc/cache.ts). */
const kindOf = (procedure: { _def: object }): unknown =>
  'middlewares' in procedure._def && Array.isArray(procedure._def.middlewares) ? procedure._def.middlewares[0] : undefined

/** The procedure facts the declared statuses, headers and descriptions follow, by `METHOD path`. */
function proceduresByRoute(): Map<string, ProcedureFacts> {
  const workspaceKind = kindOf(workspaceProcedure)
  const cachedKind = kindOf(cachedWorkspaceProcedure)
  const facts = new Map<string, ProcedureFacts>()
  forEachOpenApiProcedure<Meta>(appRouter._def.procedures, ({ meta, procedure }) => {
    const kind = kindOf(procedure)
    facts.set(`${meta.openapi.method.toLowerCase()} ${meta.openapi.path}`, {
      meta,
      workspace: kind === workspaceKind || kind === cachedKind,
      cached: kind === cachedKind,
    })
  })
  return facts
}

/** Whether the operation's input names a workspace (a workspace procedure: 404 for one the caller is no member of). */
function takesWorkspace(op: Operation, schemas: Record<string, unknown>): boolean {
  if ((op.parameters ?? []).some((p) => 'name' in p && p.name === 'workspace_uuid')) return true
  const body = op.requestBody && 'content' in op.requestBody ? op.requestBody.content['application/json']?.schema : undefined
  const resolved = body && '$ref' in body ? schemas[body.$ref.replace('#/components/schemas/', '')] : body
  return (
    typeof resolved === 'object' &&
    resolved !== null &&
    'properties' in resolved &&
    typeof resolved.properties === 'object' &&
    resolved.properties !== null &&
    'workspace_uuid' in resolved.properties
  )
}

/** The error statuses a procedure's operation can answer (docs/api/conventions.md, "Errors"). */
function procedureErrors(method: string, path: string, op: Operation, facts: ProcedureFacts, schemas: Record<string, unknown>): number[] {
  const { meta } = facts
  const isProtected = meta.openapi?.protect !== false
  const write = method !== 'get'
  const takesBody = method === 'post' || method === 'put' || method === 'patch'
  const statuses = new Set<number>([500, 503])
  // The shared headers are references: a malformed X-Workspace-UUID is a 400, a wrong service key a 401.
  const takesInput = (op.parameters ?? []).some((parameter) => !('$ref' in parameter))
  if (takesBody || takesInput || facts.workspace) statuses.add(400)
  if (takesBody) statuses.add(413).add(415)
  // A token is checked on protected operations, a service key (X-Service-Authorization) on all.
  statuses.add(401)
  if (isProtected && write && !meta.readOnlyAllowed) statuses.add(403)
  if (path.includes('{') || facts.workspace || takesWorkspace(op, schemas)) statuses.add(404)
  if (isProtected && write && !meta.readOnlyAllowed && !meta.storesNothing) statuses.add(409)
  // Idempotency-Key (docs/api/conventions.md): another body, or a retry while the first is processed.
  if (method === 'post') statuses.add(400).add(409).add(422)
  if (meta.rateLimited) statuses.add(429)
  // A model call is refused while a budget of its scope blocks (docs/api/usage-and-budgets.md).
  if (meta.callsModel) statuses.add(429).add(502).add(504)
  for (const status of meta.errorStatuses ?? []) statuses.add(status)
  return [...statuses]
}

/**
 * A run procedure's 200 that may also be the run's events (docs/api/runs.md, "One-request
 * streaming"): `text/event-stream` beside the JSON, and the headers that name the run.
 */
function withRunEventStream(ok: Responses[string]): Responses[string] {
  if ('$ref' in ok) return ok
  return {
    ...ok,
    description:
      'The run when done (application/json), or, asked with `Accept: text/event-stream` or `stream: true`, its events as ' +
      'Server-Sent Events (text/event-stream: `id:` the sequence number, `event:` the type, `data:` a RunEvent as JSON), ' +
      'from run.started to the final event',
    headers: { ...ok.headers, 'X-Run-UUID': ref('RunUuid'), 'X-Thread-UUID': ref('ThreadUuid') },
    content: {
      ...ok.content,
      // Each event's `data:` line; the framing is in the description (OpenAPI 3.1 has no item schema for streams).
      'text/event-stream': { schema: { $ref: '#/components/schemas/RunEvent' } },
    },
  }
}

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` })

/** Moves the generated 200 to the procedure's real success statuses. */
function successResponses(responses: Responses, meta: Meta): Responses {
  const { 200: ok, ...rest } = responses
  if (meta.successStatus === 204) return { ...rest, 204: { description: 'Done; no body' } }
  if (meta.successStatus)
    return { ...rest, [meta.successStatus]: { ...ok, description: meta.successStatus === 201 ? 'Created' : 'Accepted' } }
  if (meta.backgroundStatus)
    return {
      ...rest,
      200: meta.runEventStream ? withRunEventStream(ok) : ok,
      [meta.backgroundStatus]: { ...ok, description: 'Accepted: left running in the background' },
    }
  return responses
}

/** `{example}` for a media type when the status has one, else nothing. */
const exampleOf = (status: number, path: string) => {
  const example = errorExample(status, path)
  return example ? { example } : {}
}

/** Declares `statuses` (and any error status already declared) with the shared error body and an example. */
function errorResponses(responses: Responses, statuses: number[], path: string): Responses {
  const out: Responses = {}
  // Successes and `default` (an answer whose status the route leaves to the graph) stay as declared.
  for (const [status, response] of Object.entries(responses)) if (!(Number(status) >= 400)) out[status] = response
  const declared = Object.keys(responses)
    .map(Number)
    .filter((status) => status >= 400)
  for (const status of [...new Set([...declared, ...statuses])].sort()) {
    const known = ERRORS[status]
    const given = responses[status]
    const description = given && 'description' in given && given.description ? given.description : (known?.description ?? 'An error')
    out[status] = {
      description,
      ...(known?.headers ? { headers: known.headers } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, ...exampleOf(status, path) } },
    }
  }
  return out
}

/** Rewrites every operation's parameters, body, responses, description and security (see the file comment). */
function declareOperations(doc: OpenAPIObject): void {
  const procedures = proceduresByRoute()
  const schemas = doc.components?.schemas ?? {}
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const facts = procedures.get(`${method} ${path}`)
      if (facts) {
        declareRequestHeaders(op, facts, method)
        describeOperation(op, method, facts)
      }
      relaxOptionalBody(op, schemas)
      const responses = facts ? successResponses(op.responses ?? {}, facts.meta) : (op.responses ?? {})
      // A procedure's errors follow its facts; a plain route's are written beside it, plus faults.
      const statuses = facts ? procedureErrors(method, path, op, facts, schemas) : [500, 503]
      op.responses = errorResponses(
        facts ? Object.fromEntries(Object.entries(responses).filter(([status]) => Number(status) < 400)) : responses,
        statuses,
        path,
      )
      declareRequestIdHeader(op)
      op.security ??= []
    }
  }
}

/**
 * Lists each procedure's second path (src/http/path-aliases.ts) as a copy of its operation, with
 * the operationId `<id>-v1` so that generated clients name both. The REST host answers it with
 * the same procedure.
 */
function declareAliases(doc: OpenAPIObject): void {
  const paths = doc.paths ?? {}
  for (const { alias, path, method } of pathAliases()) {
    const op = paths[path]?.[method]
    if (!op) continue
    paths[alias] = {
      ...paths[alias],
      [method]: {
        ...op,
        operationId: `${op.operationId ?? `${method}-${path}`}-v1`,
        description: `The same operation as \`${method.toUpperCase()} ${path}\`.`,
      },
    }
  }
}

/** Documents built so far, by base URL (a process has one: its `APP_URL`). */
const built = new Map<string, OpenAPIObject>()

/**
 * The OpenAPI 3.1 document served at `baseUrl`, built on first use and kept: the REST surface's
 * method table, `GET /openapi.json` and `GET /docs` share one build. Callers must not change it.
 */
export function openApiDocument(baseUrl: string): OpenAPIObject {
  let doc = built.get(baseUrl)
  if (!doc) {
    doc = buildDocument(baseUrl)
    built.set(baseUrl, doc)
  }
  return doc
}

function buildDocument(baseUrl: string): OpenAPIObject {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Agent Workspace Service',
    version: '1.0.0',
    description: describeService(baseUrl),
    baseUrl,
    license: { name: 'MIT', identifier: 'MIT' },
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token from sign-in or an access token (docs/api/authentication.md).' },
    },
    // The upload, download, event stream, webhook, single sign-on and A2A routes are plain Fastify routes beside the procedures.
    paths: {
      ...MEDIA_OPENAPI_PATHS,
      ...RUN_EVENTS_OPENAPI_PATHS,
      ...WEBHOOK_OPENAPI_PATHS,
      ...AUDIT_EXPORT_OPENAPI_PATHS,
      ...SSO_OPENAPI_PATHS,
      ...A2A_OPENAPI_PATHS,
    },
  })
  declareOperations(doc)
  declareAliases(doc)
  mergeIdenticalPaths(doc)
  // trpc-to-openapi's own error shapes, replaced by Error everywhere above.
  const generated = Object.entries(doc.components?.schemas ?? {}).filter(([name]) => !name.startsWith('error.'))
  doc.components = {
    ...doc.components,
    schemas: { ...Object.fromEntries(generated), Error: errorSchema, ErrorIssue: issueSchema },
    parameters: { ...doc.components?.parameters, ...COMPONENT_PARAMETERS },
    headers: { ...doc.components?.headers, ...COMPONENT_HEADERS },
  }
  typeableExtraProperties(doc.paths)
  typeableExtraProperties(doc.components)
  itemsOfClosedTuples(doc.paths)
  itemsOfClosedTuples(doc.components)
  doc.servers = [{ url: baseUrl, description: 'This service (APP_URL)' }]
  doc.info.contact = { name: 'API reference', url: `${baseUrl}/docs` }
  const used = new Set(Object.values(doc.paths ?? {}).flatMap((item) => METHODS.flatMap((method) => item[method]?.tags ?? [])))
  doc.tags = [...used].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name }))
  return doc
}
