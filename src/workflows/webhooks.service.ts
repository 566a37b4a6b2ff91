/**
 * The webhook trigger (docs/api/workflows.md, "Workflows as resources"): `POST
 * /api/v1/hooks/{webhook_token}`. The token is the secret: it finds the workflow, no bearer token
 * is asked for. Order of checks, none of which creates an execution: unknown token (or a deleted
 * workflow) 404; a signature secret set and `X-Signature` missing or wrong 401; workflow inactive
 * 409; its trigger not a `webhook_trigger` 409; a body that its content type cannot be read as 400.
 * Then the execution is recorded and:
 * - when the graph has a `respond_to_webhook` node, it runs here and the caller gets that node's
 *   response as soon as it runs (the rest of the graph goes on); an execution that ends without
 *   responding answers 200 `{data: {execution_uuid, status, output}}` when it succeeded, or the
 *   error body of docs/api/conventions.md when it failed (502, or 504 when it ran past its timeout),
 *   or 202 `{data: {execution_uuid, status: "queued"}}` when the process shut down under it and
 *   handed it back to the queue (`settings.on_interrupt: resume`);
 * - otherwise it goes to the queue and the caller gets 202 `{data: {execution_uuid, status: "queued"}}`
 *   as soon as it is stored, its job sent or not (the engine sends it again, and its sweep relays
 *   what is left: src/workflows/engine.ts, `runQueued`). A lost database connection answers 503
 *   only when no execution was stored (src/workflows/store.ts), so a sender that retries after a
 *   503 does not run the workflow twice.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'
import { ConflictError, NotFoundError, UnauthorizedError, UpstreamError, UpstreamTimeoutError, ValidationError } from '../platform/errors.ts'
import { isRecord } from '../access/wire.ts'
import type { Config } from '../platform/config.ts'
import { prepared, type Em } from '../platform/db.ts'
import { resealColumn, type ResealReport } from '../platform/reseal.ts'
import type { ServiceDeps } from '../context.ts'
import { RUNNABLE_COLUMNS, toRunnable, triggerTypeOf, type RunnableWorkflow } from './engine.ts'
import type { WebhookResponse } from './types.ts'
import { keyringOf, open } from '../platform/secrets.ts'

/** The sealing context of a workflow's webhook secret (a ciphertext moved to another row does not open). */
export const webhookSecretContext = (workflowUuid: string) => `workflows.webhook_secret:${workflowUuid}`

/** Re-seals every webhook secret not sealed under the current APP_KEY (`npm run keys:rotate`); `failed` holds workflow uuids. */
export function resealWebhookSecrets(em: Em, config: Pick<Config, 'appKey' | 'previousAppKeys'>): Promise<ResealReport> {
  return resealColumn(em, keyringOf(config), {
    table: 'workflows',
    ciphertext: 'webhook_secret_ciphertext',
    keyId: 'webhook_secret_key_id',
    context: webhookSecretContext,
  })
}

/** What a webhook call uses of the process's dependencies. */
export type WebhookDeps = Pick<ServiceDeps, 'orm' | 'config' | 'workflows'>

/** What the route read from the request. */
export interface WebhookRequest {
  method: string
  headers: Record<string, string | string[] | undefined>
  query: Record<string, unknown>
  /** The raw body (empty when none was sent). */
  body: Buffer
  contentType: string | undefined
}

/** The workflow of a token, with its sealed secret. */
interface HookedWorkflow extends RunnableWorkflow {
  secret: { ciphertext: string; keyId: string } | null
}

/** Headers that are never handed to the graph: credentials of the caller's other systems. */
const HIDDEN_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'x-signature'])

/** The webhook look-up: runs on every call, prepared once per connection on PostgreSQL. */
const hookQuery = prepared(
  'workflow_webhook_lookup',
  `select ${RUNNABLE_COLUMNS}, w.webhook_secret_ciphertext as "ciphertext", w.webhook_secret_key_id as "keyId"
   from workflows w join workspaces ws on ws.id = w.workspace_id and ws.deleted_at is null
   where w.webhook_token = ? and w.deleted_at is null`,
)

/**
 * The workflow of a token: from this process's short-lived cache (see {@link WebhookCache}) or
 * one indexed query. @throws NotFoundError for an unknown token or a deleted workflow.
 */
async function findWorkflow(deps: WebhookDeps, token: string): Promise<HookedWorkflow> {
  const cache = deps.workflows.webhooks
  const cached = cache.get(token)
  if (cached) return cached as HookedWorkflow
  const generation = cache.generation
  const [row] = await hookQuery(deps.orm, () => deps.orm.em.fork(), [token])
  if (!row) throw new NotFoundError('Webhook')
  const workflow: HookedWorkflow = {
    ...toRunnable(row),
    secret: row.ciphertext ? { ciphertext: String(row.ciphertext), keyId: String(row.keyId) } : null,
  }
  cache.set(token, workflow, generation)
  return workflow
}

/**
 * Checks `X-Signature`: hex HMAC-SHA256 of the raw body under the workflow's secret, optionally
 * written `sha256=<hex>` (GitHub's form). Constant-time comparison.
 * @throws UnauthorizedError when it is missing or does not match.
 */
function verifySignature(deps: WebhookDeps, workflow: HookedWorkflow, header: string | string[] | undefined, body: Buffer): void {
  if (!workflow.secret) return
  const sent = (Array.isArray(header) ? header[0] : header)?.trim().replace(/^sha256=/i, '') ?? ''
  if (!/^[0-9a-f]{64}$/i.test(sent)) throw new UnauthorizedError('Missing or malformed X-Signature (hex HMAC-SHA256 of the body)')
  const secret = open(keyringOf(deps.config), workflow.secret, webhookSecretContext(workflow.uuid))
  const expected = createHmac('sha256', secret).update(body).digest()
  if (!timingSafeEqual(expected, Buffer.from(sent, 'hex'))) throw new UnauthorizedError('The X-Signature does not match the body')
}

/**
 * The body as the graph sees it: parsed JSON for JSON types, an object for form posts, text for
 * text types and for no type, base64 otherwise.
 * @throws ValidationError naming `body` for malformed JSON.
 */
function readBody(body: Buffer, contentType: string | undefined): { body: unknown; encoding?: 'base64' } {
  if (!body.length) return { body: null }
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase()
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      return { body: JSON.parse(body.toString('utf8')) }
    } catch {
      throw new ValidationError(['body'], 'Malformed JSON in request body')
    }
  }
  if (type === 'application/x-www-form-urlencoded') return { body: Object.fromEntries(new URLSearchParams(body.toString('utf8'))) }
  if (!type || type.startsWith('text/') || type === 'application/xml') return { body: body.toString('utf8') }
  return { body: body.toString('base64'), encoding: 'base64' }
}

/** The trigger's input: `{method, headers, query, body}` (plus `encoding` for binary bodies). */
function triggerInput(request: WebhookRequest): Record<string, unknown> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HIDDEN_HEADERS.has(name)) continue
    headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  return { method: request.method, headers, query: request.query, ...readBody(request.body, request.contentType) }
}

/** True when the graph has a node that answers the caller. */
function responds(workflow: RunnableWorkflow): boolean {
  return workflow.nodes.some((node) => isRecord(node) && node.type === 'respond_to_webhook')
}

/** How the route answers. */
export type WebhookAnswer = { kind: 'response'; response: WebhookResponse } | { kind: 'json'; status: number; body: unknown }

/**
 * Handles one webhook call (module comment).
 * @throws NotFoundError, UnauthorizedError, ConflictError, ValidationError (no execution made);
 *   UpstreamError / UpstreamTimeoutError when the waited execution failed without responding; the
 *   database's error when the execution could not be stored (503, nothing stored).
 */
export async function triggerWebhook(deps: WebhookDeps, token: string, request: WebhookRequest): Promise<WebhookAnswer> {
  const workflow = await findWorkflow(deps, token)
  verifySignature(deps, workflow, request.headers['x-signature'], request.body)
  if (!workflow.isActive) throw new ConflictError('The workflow is not active; activate it to receive webhooks')
  if (triggerTypeOf(workflow) !== 'webhook_trigger') throw new ConflictError("The workflow's trigger is not a webhook trigger")
  const input = triggerInput(request)
  const engine = deps.workflows
  if (!responds(workflow)) {
    const record = await engine.runQueued(workflow, { mode: 'webhook', userId: workflow.userId, input })
    return { kind: 'json', status: 202, body: { data: { execution_uuid: record.uuid, status: 'queued' } } }
  }
  const started = await engine.runHere(workflow, { mode: 'webhook', userId: workflow.userId, input })
  const response = await started.response
  if (response) return { kind: 'response', response }
  const result = await started.done
  // This process shut down under it and handed it back to the queue: it resumes elsewhere.
  if (result.handedOver) return { kind: 'json', status: 202, body: { data: { execution_uuid: started.record.uuid, status: 'queued' } } }
  if (result.status === 'succeeded') {
    return { kind: 'json', status: 200, body: { data: { execution_uuid: started.record.uuid, status: result.status, output: result.output } } }
  }
  const message = `Execution ${started.record.uuid} ${result.status}: ${result.error?.message ?? 'no response'}`
  throw result.error?.code === 'timeout' ? new UpstreamTimeoutError(message) : new UpstreamError(message)
}
