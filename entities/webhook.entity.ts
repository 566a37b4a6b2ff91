import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { User, Workspace } from './user-workspace.entity.ts'

/** The event types a webhook endpoint may subscribe to (docs/api/webhooks.md, "Event types"). */
export const WEBHOOK_EVENT_TYPES = [
  'run.succeeded',
  'run.failed',
  'run.canceled',
  'run.approval_requested',
  'workflow_execution.succeeded',
  'workflow_execution.failed',
  'knowledge_document.ready',
  'knowledge_document.failed',
  'command_room_firing.succeeded',
  'command_room_firing.failed',
  'budget.threshold_reached',
  'agent.version_created',
  'evaluation.succeeded',
  'evaluation.failed',
  'webhook_endpoint.ping',
] as const
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** A delivery's state: attempts due, a 2xx received, or no attempt left (or its endpoint gone quiet). */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number]

/** One attempt of a delivery, as stored in `webhook_deliveries.attempts`. */
export interface WebhookAttempt {
  attempted_at: string
  status_code: number | null
  error: string | null
  duration_ms: number
  response_body: string | null
}

/**
 * A workspace's receiver of outbound events (`webhook_endpoints`, docs/api/webhooks.md). Its
 * signing secret is sealed with the service key (ciphertext and key id), as is the secret before
 * the last rotation while both sign (`previous_secret_expires_at`). `failing_since` is when the
 * first of an unbroken run of failed attempts happened (null after a success).
 */
export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  indexes: [{ properties: ['workspace'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    workspace: () => p.manyToOne(Workspace).fieldName('workspace_id').deleteRule('cascade'),
    user: () => p.manyToOne(User).nullable().fieldName('user_id').deleteRule('set null'),
    url: p.text(),
    description: p.text().nullable(),
    eventTypes: p.json<string[]>().fieldName('event_types'),
    isActive: p.boolean().fieldName('is_active').default(true),
    disabledReason: p.text().nullable().fieldName('disabled_reason'),
    secretCiphertext: p.text().fieldName('secret_ciphertext'),
    secretKeyId: p.string().length(64).fieldName('secret_key_id'),
    previousSecretCiphertext: p.text().nullable().fieldName('previous_secret_ciphertext'),
    previousSecretKeyId: p.string().length(64).nullable().fieldName('previous_secret_key_id'),
    previousSecretExpiresAt: p.datetime().nullable().fieldName('previous_secret_expires_at'),
    failingSince: p.datetime().nullable().fieldName('failing_since'),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .fieldName('updated_at')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
})

/**
 * One event on its way to one endpoint (`webhook_deliveries`, unique per endpoint and event): the
 * payload as the exact bytes every attempt signs and sends, the attempts so far, when the next is
 * due, and the lease of the job sent for it (`lock_token`, `locked_until`).
 */
export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ properties: ['endpoint', 'eventId'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    endpoint: () => p.manyToOne(WebhookEndpoint).fieldName('endpoint_id').deleteRule('cascade'),
    workspaceId: p.bigint('number').fieldName('workspace_id'),
    eventId: p.uuid().fieldName('event_id'),
    eventType: p.text().fieldName('event_type'),
    status: p.enum(() => WEBHOOK_DELIVERY_STATUSES).default('pending'),
    attempts: p.json<WebhookAttempt[]>(),
    /** Attempts the schedule allows: the retry delays plus one; a redelivery allows one more. */
    maxAttempts: p.integer().fieldName('max_attempts'),
    nextAttemptAt: p.datetime().nullable().fieldName('next_attempt_at'),
    lockedUntil: p.datetime().nullable().fieldName('locked_until'),
    /** The id of the one queued job that may make the next attempt. */
    lockToken: p.uuid().nullable().fieldName('lock_token'),
    payload: p.text(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .fieldName('updated_at')
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
})

export type IWebhookEndpoint = InferEntity<typeof WebhookEndpoint>
export type IWebhookDelivery = InferEntity<typeof WebhookDelivery>
