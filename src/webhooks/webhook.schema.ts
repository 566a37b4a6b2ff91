/**
 * Inputs and outputs of the webhook endpoints and deliveries (docs/api/webhooks.md). Inputs are
 * strict objects, so an unknown field is a 400 naming it; an unknown event type is a 400 naming
 * `event_types.<i>`.
 */
import { z } from 'zod'
import { WEBHOOK_DELIVERY_STATUSES, WEBHOOK_EVENT_TYPES, type WebhookAttempt, type WebhookDeliveryStatus } from '../../entities/index.ts'
import { iso, isoOrNull, jsonBoolean, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'

/** What `event_types` may hold: the event types, or `*` for all of them. */
const EventTypeOrAll = z.enum(['*', ...WEBHOOK_EVENT_TYPES])

const EventTypes = z
  .array(EventTypeOrAll)
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length + 1)
  .refine((types) => new Set(types).size === types.length, 'must not repeat a type')

/** An endpoint's fields as a body gives them; the URL's address rules are the service's check. */
const endpointFields = {
  url: text(2048, 1),
  description: text(1000).nullable().optional(),
  event_types: EventTypes,
  is_active: jsonBoolean(),
}

/** `POST /api/v1/webhook-endpoints` body. */
export const CreateWebhookEndpointInput = z.strictObject({
  ...endpointFields,
  is_active: endpointFields.is_active.default(true),
  workspace_uuid: z.uuid().optional(),
})
export type TCreateWebhookEndpointInput = z.infer<typeof CreateWebhookEndpointInput>

/** `PUT /api/v1/webhook-endpoints/{endpoint_uuid}` body: any of the fields. */
export const UpdateWebhookEndpointInput = z.strictObject({
  endpoint_uuid: z.uuid(),
  url: endpointFields.url.optional(),
  description: endpointFields.description,
  event_types: endpointFields.event_types.optional(),
  is_active: endpointFields.is_active.optional(),
  workspace_uuid: z.uuid().optional(),
})
export type TUpdateWebhookEndpointInput = z.infer<typeof UpdateWebhookEndpointInput>

/** Path of an endpoint's operations (plus the workspace context). */
export const WebhookEndpointPathInput = z.strictObject({ endpoint_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** Sortable columns of the endpoint list. */
export const WEBHOOK_ENDPOINT_SORTS = ['created_at', '-created_at', 'updated_at', '-updated_at'] as const

/** `GET /api/v1/webhook-endpoints` query. */
export const WebhookEndpointListInput = z
  .strictObject({ ...pageQuery, sort: sortParam(WEBHOOK_ENDPOINT_SORTS, 'created_at'), workspace_uuid: z.uuid().optional() })
  .prefault({})
export type TWebhookEndpointListInput = z.infer<typeof WebhookEndpointListInput>

/** `GET /api/v1/webhook-endpoints/{endpoint_uuid}/deliveries` query. */
export const WebhookDeliveryListInput = z.strictObject({
  endpoint_uuid: z.uuid(),
  ...pageQuery,
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  event_type: z.enum(WEBHOOK_EVENT_TYPES).optional(),
  workspace_uuid: z.uuid().optional(),
})
export type TWebhookDeliveryListInput = z.infer<typeof WebhookDeliveryListInput>

/** Path of a delivery's operations (plus the workspace context). */
export const WebhookDeliveryPathInput = z.strictObject({ delivery_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** The Endpoint shape (docs/api/webhooks.md, "Endpoints"); `secret` only in the create and rotate answers. */
export const WebhookEndpoint = z
  .object({
    uuid: z.uuid(),
    url: z.string(),
    description: z.string().nullable(),
    event_types: z.array(EventTypeOrAll),
    is_active: z.boolean(),
    disabled_reason: z.string().nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'WebhookEndpoint' })
export type TWebhookEndpoint = z.infer<typeof WebhookEndpoint>

/** An endpoint with its signing secret, shown once. */
export const WebhookEndpointWithSecret = WebhookEndpoint.extend({ secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/) }).meta({
  id: 'WebhookEndpointWithSecret',
})
export type TWebhookEndpointWithSecret = z.infer<typeof WebhookEndpointWithSecret>

/** One attempt of a delivery. */
export const WebhookAttemptShape = z.object({
  attempted_at: timestamp(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int(),
  response_body: z.string().nullable(),
})

/** The Delivery shape (docs/api/webhooks.md, "Deliveries"). */
export const WebhookDelivery = z
  .object({
    uuid: z.uuid(),
    endpoint_uuid: z.uuid(),
    event_id: z.uuid(),
    event_type: z.enum(WEBHOOK_EVENT_TYPES),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    attempts: z.array(WebhookAttemptShape),
    next_attempt_at: timestamp().nullable(),
    payload: z.record(z.string(), z.unknown()),
    created_at: timestamp(),
  })
  .meta({ id: 'WebhookDelivery' })
export type TWebhookDelivery = z.infer<typeof WebhookDelivery>

/** An endpoint row as {@link ENDPOINT_COLUMNS} reads it. */
export interface EndpointRow {
  id: number
  uuid: string
  url: string
  description: string | null
  eventTypes: unknown
  isActive: boolean
  disabledReason: string | null
  createdAt: Date | string
  updatedAt: Date | string
}

/** The columns of an endpoint as {@link EndpointRow}, over `e`. */
export const ENDPOINT_COLUMNS = `e.id::float8 as id, e.uuid, e.url, e.description, e.event_types as "eventTypes", e.is_active as "isActive",
  e.disabled_reason as "disabledReason", e.created_at as "createdAt", e.updated_at as "updatedAt"`

const jsonOf = <T>(value: unknown): T => (typeof value === 'string' ? (JSON.parse(value) as T) : (value as T))

/** Row -> wire. */
export function toWebhookEndpoint(row: EndpointRow): TWebhookEndpoint {
  return {
    uuid: row.uuid,
    url: row.url,
    description: row.description,
    event_types: jsonOf<TWebhookEndpoint['event_types']>(row.eventTypes),
    is_active: row.isActive,
    disabled_reason: row.disabledReason,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** A delivery row as {@link DELIVERY_COLUMNS} reads it. */
export interface DeliveryRow {
  id: number
  uuid: string
  endpointUuid: string
  eventId: string
  eventType: TWebhookDelivery['event_type']
  status: WebhookDeliveryStatus
  attempts: unknown
  nextAttemptAt: Date | string | null
  payload: string
  createdAt: Date | string
}

/** The columns of a delivery as {@link DeliveryRow}, over `d` joined to its endpoint `e`. */
export const DELIVERY_COLUMNS = `d.id::float8 as id, d.uuid, e.uuid as "endpointUuid", d.event_id as "eventId", d.event_type as "eventType",
  d.status, d.attempts, d.next_attempt_at as "nextAttemptAt", d.payload, d.created_at as "createdAt"`

/** Row -> wire: the payload as the JSON it was sent as. */
export function toWebhookDelivery(row: DeliveryRow): TWebhookDelivery {
  return {
    uuid: row.uuid,
    endpoint_uuid: row.endpointUuid,
    event_id: row.eventId,
    event_type: row.eventType,
    status: row.status,
    attempts: jsonOf<WebhookAttempt[]>(row.attempts),
    next_attempt_at: row.status === 'pending' ? isoOrNull(row.nextAttemptAt) : null,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
    created_at: iso(row.createdAt),
  }
}
