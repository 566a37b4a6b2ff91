/**
 * What the webhooks capability adds to the service context's dependencies (src/context.ts,
 * `ServiceDeps`), by declaration merging.
 */
import type { WebhookEngine } from './engine.ts'

/** What services call on the webhook engine (./engine.ts): attempt given deliveries now rather than at the next look. */
export type WebhooksPort = Pick<WebhookEngine, 'sendDue'>

declare module '../context.ts' {
  interface ServiceDeps {
    webhooks: WebhooksPort
  }
}
