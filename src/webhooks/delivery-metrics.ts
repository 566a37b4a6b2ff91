/**
 * `webhook_deliveries_total{outcome}` (docs/operations.md, "Metrics"): attempts of outbound
 * webhook deliveries (docs/api/webhooks.md, "Delivery"), counted as each ends (./engine.ts), by
 * the status it leaves its delivery in: `succeeded` (a 2xx), `pending` (it failed and the
 * delivery is tried again after the next retry delay) or `failed` (it failed and the delivery
 * ends so: its attempts are used up, the endpoint answered 410, or it was a ping's or a
 * redelivery's one attempt). A delivery failed without an attempt (its endpoint turned off) is
 * not an attempt and is not counted.
 */
import { counter } from '../platform/prometheus.ts'

/** The status a delivery is left in by an attempt (`webhook_deliveries.status`). */
export type AttemptOutcome = 'succeeded' | 'pending' | 'failed'

const attempts = counter(
  {
    name: 'webhook_deliveries_total',
    help: 'Outbound webhook delivery attempts, by the status they left their delivery in (succeeded, pending: retried later, failed)',
    labelNames: ['outcome'] as const,
  },
  { label: 'outcome', values: ['succeeded', 'pending', 'failed'] satisfies AttemptOutcome[] },
)

/** Counts one attempt that ended with `outcome`. */
export function countDeliveryAttempt(outcome: AttemptOutcome): void {
  attempts.inc({ outcome })
}
