/**
 * Webhook endpoints (docs/api/webhooks.md, "Endpoints"): the receivers of the request's
 * workspace. Only its `owner`s and `admin`s see or change them (403 for other members; another
 * workspace's endpoint is a 404). The signing secret is answered once, by create and
 * rotate-secret; it is stored sealed with the service key.
 */
import { audit, fieldChanges } from '../access/audit.ts'
import { uuidv7 } from 'uuidv7'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import { checkOutboundUrl, type UrlProblem } from '../platform/outbound-url.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import { viewerOf } from '../access/resource-access.ts'
import { managesWorkspace } from '../access/visibility.ts'
import type { ResourceCtx } from '../context.ts'
import { newSecret, sealSecret } from './delivery.ts'
import {
  DELIVERY_COLUMNS,
  ENDPOINT_COLUMNS,
  toWebhookDelivery,
  toWebhookEndpoint,
  type DeliveryRow,
  type EndpointRow,
  type TCreateWebhookEndpointInput,
  type TUpdateWebhookEndpointInput,
  type TWebhookDelivery,
  type TWebhookEndpoint,
  type TWebhookEndpointListInput,
  type TWebhookEndpointWithSecret,
} from './webhook.schema.ts'

/** Hours the secret before a rotation still signs. */
const PREVIOUS_SECRET_HOURS = 24

const SOURCE: ListSource = {
  from: 'webhook_endpoints e',
  columns: ENDPOINT_COLUMNS,
  alias: 'e',
  sorts: { created_at: 'e.created_at', updated_at: 'e.updated_at' },
}

/** @throws ForbiddenError unless the caller is an `owner` or `admin` of the request's workspace. */
export function requireManager(ctx: ResourceCtx): void {
  if (!managesWorkspace(viewerOf(ctx)))
    throw new ForbiddenError(`Your role (${ctx.workspace.role}) may not manage webhooks: ask an owner or admin`)
}

/** The id of endpoint `uuid` of the request's workspace. @throws ForbiddenError, NotFoundError */
export async function requireEndpoint(ctx: ResourceCtx, uuid: string): Promise<number> {
  requireManager(ctx)
  const [row] = await ctx.em.execute<{ id: number }[]>(
    `select id::float8 as id from webhook_endpoints where uuid = ? and workspace_id = ?`,
    [uuid, ctx.workspace.workspace.id],
  )
  if (!row) throw new NotFoundError('Webhook endpoint')
  return Number(row.id)
}

const URL_PROBLEMS: Record<UrlProblem, string> = {
  invalid: 'Not a valid URL',
  scheme: 'Only http and https URLs can receive webhooks',
  credentials: 'URLs with credentials cannot receive webhooks',
  private: 'The URL points at a private, loopback or link-local address (allowed only with WEBHOOK_ALLOW_PRIVATE_NETWORK=true)',
}

/** The URL, normalised. @throws ValidationError naming `url`. */
async function checkUrl(ctx: ResourceCtx, raw: string): Promise<string> {
  const checked = await checkOutboundUrl(raw, ctx.config.webhooks.allowPrivateNetwork)
  if ('url' in checked) return checked.url
  throw new ValidationError(['url'], URL_PROBLEMS[checked.problem])
}

async function readEndpoint(ctx: ResourceCtx, id: number): Promise<TWebhookEndpoint> {
  const [row] = await ctx.em.execute<EndpointRow[]>(`select ${ENDPOINT_COLUMNS} from webhook_endpoints e where e.id = ?`, [id])
  if (!row) throw new NotFoundError('Webhook endpoint')
  return toWebhookEndpoint(row)
}

/** The workspace's endpoints, paginated. @throws ForbiddenError */
export async function list(ctx: ResourceCtx, input: TWebhookEndpointListInput) {
  requireManager(ctx)
  const where = { sql: 'e.workspace_id = ?', params: [ctx.workspace.workspace.id] }
  return listPage(ctx, SOURCE, where, input, { path: '/api/v1/webhook-endpoints', query: {} }, (row) =>
    toWebhookEndpoint(row as unknown as EndpointRow),
  )
}

/** Creates an endpoint; the answer carries its secret, once. @throws ForbiddenError, ValidationError naming `url`. */
export async function create(ctx: ResourceCtx, input: TCreateWebhookEndpointInput): Promise<{ data: TWebhookEndpointWithSecret }> {
  requireManager(ctx)
  const url = await checkUrl(ctx, input.url)
  const uuid = uuidv7()
  const secret = newSecret()
  const sealed = sealSecret(ctx.config, uuid, secret)
  const id = await ctx.em.transactional(async (em) => {
    const [row] = await em.execute<{ id: number }[]>(
      `insert into webhook_endpoints (uuid, workspace_id, user_id, url, description, event_types, is_active, secret_ciphertext, secret_key_id, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, now(), now()) returning id::float8 as id`,
      [
        uuid,
        ctx.workspace.workspace.id,
        ctx.auth.user.id,
        url,
        input.description ?? null,
        JSON.stringify(input.event_types),
        input.is_active,
        sealed.ciphertext,
        sealed.keyId,
      ],
    )
    await audit(em, ctx, {
      action: 'webhook_endpoint.create',
      resource: { type: 'webhook_endpoint', uuid },
      changes: fieldChanges(null, {
        url,
        description: input.description ?? null,
        event_types: input.event_types,
        is_active: input.is_active,
        secret,
      }),
    })
    return Number(row.id)
  })
  return { data: { ...(await readEndpoint(ctx, id)), secret } }
}

/** One endpoint. @throws ForbiddenError, NotFoundError */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TWebhookEndpoint }> {
  return { data: await readEndpoint(ctx, await requireEndpoint(ctx, uuid)) }
}

/**
 * Changes an endpoint's fields. Turning it active again clears why it was disabled and its
 * failure state. @throws ForbiddenError, NotFoundError, ValidationError naming `url`.
 */
export async function update(ctx: ResourceCtx, input: TUpdateWebhookEndpointInput): Promise<{ data: TWebhookEndpoint }> {
  const id = await requireEndpoint(ctx, input.endpoint_uuid)
  const url = input.url === undefined ? null : await checkUrl(ctx, input.url)
  await ctx.em.transactional(async (em) => {
    const [before] = await em.execute<Record<string, unknown>[]>(
      `select url, description, event_types, is_active from webhook_endpoints where id = ? for update`,
      [id],
    )
    // The row as the update left it is its RETURNING: no second read.
    const [after] = await em.execute<Record<string, unknown>[]>(
      `update webhook_endpoints set url = coalesce(?, url),
       description = case when ? then ? else description end,
       event_types = coalesce(?::jsonb, event_types),
       is_active = coalesce(?, is_active),
       disabled_reason = case when ? then null else disabled_reason end,
       failing_since = case when ? and not is_active then null else failing_since end,
       updated_at = now()
     where id = ? returning url, description, event_types, is_active`,
      [
        url,
        input.description !== undefined,
        input.description ?? null,
        input.event_types ? JSON.stringify(input.event_types) : null,
        input.is_active ?? null,
        input.is_active === true,
        input.is_active === true,
        id,
      ],
    )
    const changes = fieldChanges(before, after)
    await audit(em, ctx, {
      action: 'webhook_endpoint.update',
      resource: { type: 'webhook_endpoint', uuid: input.endpoint_uuid },
      changes,
    })
  })
  return { data: await readEndpoint(ctx, id) }
}

/** Deletes an endpoint with its deliveries (pending ones are never attempted). @throws ForbiddenError, NotFoundError */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const id = await requireEndpoint(ctx, uuid)
  await ctx.em.transactional(async (em) => {
    const deleted = await em.execute<{ id: number }[]>('delete from webhook_endpoints where id = ? returning id', [id])
    if (deleted.length > 0) await audit(em, ctx, { action: 'webhook_endpoint.delete', resource: { type: 'webhook_endpoint', uuid } })
  })
}

/**
 * A new secret for the endpoint, answered once; the one before keeps signing (a second
 * signature) for {@link PREVIOUS_SECRET_HOURS} hours. @throws ForbiddenError, NotFoundError
 */
export async function rotateSecret(ctx: ResourceCtx, uuid: string): Promise<{ data: TWebhookEndpointWithSecret }> {
  const id = await requireEndpoint(ctx, uuid)
  const secret = newSecret()
  const sealed = sealSecret(ctx.config, uuid, secret)
  await ctx.em.transactional(async (em) => {
    await em.execute(
      `update webhook_endpoints set previous_secret_ciphertext = secret_ciphertext, previous_secret_key_id = secret_key_id,
         previous_secret_expires_at = now() + make_interval(hours => ?), secret_ciphertext = ?, secret_key_id = ?, updated_at = now()
       where id = ?`,
      [PREVIOUS_SECRET_HOURS, sealed.ciphertext, sealed.keyId, id],
    )
    await audit(em, ctx, {
      action: 'webhook_endpoint.rotate_secret',
      resource: { type: 'webhook_endpoint', uuid },
      changes: { secret: { from: 'previous', to: secret } },
    })
  })
  return { data: { ...(await readEndpoint(ctx, id)), secret } }
}

/**
 * Sends a `webhook_endpoint.ping` event to the endpoint now, whatever its `event_types` and
 * `is_active`: one attempt, not retried. Answers the delivery. @throws ForbiddenError, NotFoundError
 */
export async function ping(ctx: ResourceCtx, uuid: string): Promise<{ data: TWebhookDelivery }> {
  const id = await requireEndpoint(ctx, uuid)
  const endpoint = await readEndpoint(ctx, id)
  const eventId = uuidv7()
  const payload = JSON.stringify({
    id: eventId,
    type: 'webhook_endpoint.ping',
    timestamp: new Date().toISOString(),
    workspace_uuid: ctx.workspace.workspace.uuid,
    data: endpoint,
  })
  const [row] = await ctx.em.execute<{ id: number }[]>(
    `insert into webhook_deliveries (uuid, endpoint_id, workspace_id, event_id, event_type, status, attempts, max_attempts, next_attempt_at, payload, created_at, updated_at)
     values (?, ?, ?, ?, 'webhook_endpoint.ping', 'pending', '[]'::jsonb, 1, now(), ?, now(), now()) returning id::float8 as id`,
    [uuidv7(), id, ctx.workspace.workspace.id, eventId, payload],
  )
  return { data: await attemptNow(ctx, Number(row.id)) }
}

/** Sends the job of a due delivery at once (else the next look does) and answers the delivery. */
export async function attemptNow(ctx: ResourceCtx, deliveryId: number): Promise<TWebhookDelivery> {
  await ctx.deps.webhooks
    .sendDue([deliveryId])
    .catch((error: unknown) => ctx.log.warn({ err: error }, 'could not queue a webhook attempt now; the next look will'))
  const [row] = await ctx.em.execute<DeliveryRow[]>(
    `select ${DELIVERY_COLUMNS} from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id where d.id = ?`,
    [deliveryId],
  )
  if (!row) throw new ConflictError('The delivery was removed meanwhile')
  return toWebhookDelivery(row)
}
