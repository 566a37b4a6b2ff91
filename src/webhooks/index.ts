/**
 * The webhooks capability's public surface (docs/api/webhooks.md): endpoints, deliveries, the
 * engine that dispatches the event outbox and delivers, and the reader of events' `data`. The
 * only module routers, the HTTP host and the runtime import from src/webhooks/
 * (docs/architecture.md, "Rules").
 */
export * as webhookDeliveries from './deliveries.service.ts'
export * as webhookEndpoints from './endpoints.service.ts'
export { createEventDataReader } from './event-data.ts'
export { DELIVER_JOB, WebhookEngine } from './engine.ts'
export { resealEndpointSecrets } from './delivery.ts'
export {
  CreateWebhookEndpointInput,
  UpdateWebhookEndpointInput,
  WebhookDelivery,
  WebhookDeliveryListInput,
  WebhookDeliveryPathInput,
  WebhookEndpoint,
  WebhookEndpointListInput,
  WebhookEndpointPathInput,
  WebhookEndpointWithSecret,
} from './webhook.schema.ts'
