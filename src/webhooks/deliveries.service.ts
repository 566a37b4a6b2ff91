/**
 * Webhook deliveries (docs/api/webhooks.md, "Deliveries"): one per event and endpoint, with its
 * attempts. Owners and admins of the endpoint's workspace read them and ask for another attempt.
 */
import { ConflictError, NotFoundError } from '../platform/errors.ts'
import { Conditions } from '../access/list-filters.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import type { ResourceCtx } from '../context.ts'
import { attemptNow, requireEndpoint, requireManager } from './endpoints.service.ts'
import {
  DELIVERY_COLUMNS,
  toWebhookDelivery,
  type DeliveryRow,
  type TWebhookDelivery,
  type TWebhookDeliveryListInput,
} from './webhook.schema.ts'

const SOURCE: ListSource = {
  from: 'webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id',
  columns: DELIVERY_COLUMNS,
  alias: 'd',
  sorts: { created_at: 'd.created_at' },
}

/** An endpoint's deliveries, newest first, filtered by `status` and `event_type`. @throws ForbiddenError, NotFoundError */
export async function list(ctx: ResourceCtx, input: TWebhookDeliveryListInput) {
  const endpointId = await requireEndpoint(ctx, input.endpoint_uuid)
  const where = new Conditions({ sql: 'd.endpoint_id = ?', params: [endpointId] })
  if (input.status) where.add('d.status = ?', input.status)
  if (input.event_type) where.add('d.event_type = ?', input.event_type)
  return listPage(
    ctx,
    SOURCE,
    where.toSql(),
    { ...input, sort: '-created_at' },
    { path: `/api/v1/webhook-endpoints/${input.endpoint_uuid}/deliveries`, query: { status: input.status, event_type: input.event_type } },
    (row) => toWebhookDelivery(row as unknown as DeliveryRow),
  )
}

/** The id and state of delivery `uuid` of the request's workspace. @throws ForbiddenError, NotFoundError */
async function requireDelivery(ctx: ResourceCtx, uuid: string): Promise<DeliveryRow & { endpointActive: boolean }> {
  requireManager(ctx)
  const [row] = await ctx.em.execute<(DeliveryRow & { endpointActive: boolean })[]>(
    `select ${DELIVERY_COLUMNS}, e.is_active as "endpointActive" from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
     where d.uuid = ? and e.workspace_id = ?`,
    [uuid, ctx.workspace.workspace.id],
  )
  if (!row) throw new NotFoundError('Webhook delivery')
  return row
}

/** One delivery with its attempts. @throws ForbiddenError, NotFoundError */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TWebhookDelivery }> {
  return { data: toWebhookDelivery(await requireDelivery(ctx, uuid)) }
}

/**
 * One more attempt of a delivery, now, with the same `webhook-id` and payload: it is pending
 * again until that attempt ends (not retried after it).
 * @throws ForbiddenError, NotFoundError; ConflictError while an attempt of it is under way, or
 *   when its endpoint is inactive (a ping excepted).
 */
export async function redeliver(ctx: ResourceCtx, uuid: string): Promise<{ data: TWebhookDelivery }> {
  const found = await requireDelivery(ctx, uuid)
  if (!found.endpointActive && found.eventType !== 'webhook_endpoint.ping') {
    throw new ConflictError('The endpoint is inactive: turn it active (PUT is_active: true) before redelivering')
  }
  const [row] = await ctx.em.execute<{ id: number }[]>(
    `update webhook_deliveries set status = 'pending', max_attempts = jsonb_array_length(attempts) + 1, next_attempt_at = now(),
       lock_token = null, locked_until = null, updated_at = now()
     where id = ? and (lock_token is null or locked_until <= now()) returning id::float8 as id`,
    [found.id],
  )
  if (!row) throw new ConflictError('An attempt of this delivery is under way: ask again once it has ended')
  return { data: await attemptNow(ctx, Number(row.id)) }
}
