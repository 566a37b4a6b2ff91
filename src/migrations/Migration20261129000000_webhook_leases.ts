import { Migration } from '@mikro-orm/migrations'

/**
 * An endpoint's pending deliveries by due time, and its leased ones (docs/api/webhooks.md,
 * "Delivery"): the engine leases each endpoint's earliest due attempts up to its cap after
 * counting the leases it holds, per endpoint, so both must be index ranges of that endpoint
 * whatever the backlog (the endpoint-and-id index would walk every delivery it ever had).
 */
export class Migration20261129000000_webhook_leases extends Migration {
  override name = 'Migration20261129000000_webhook_leases'

  override up(): void | Promise<void> {
    this.addSql(
      `create index "webhook_deliveries_pending_endpoint_index" on "webhook_deliveries" ("endpoint_id", "next_attempt_at") where "status" = 'pending';`,
    )
    this.addSql(
      `create index "webhook_deliveries_leased_index" on "webhook_deliveries" ("endpoint_id", "locked_until") where "status" = 'pending' and "lock_token" is not null;`,
    )
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_pending_endpoint_index";`)
    this.addSql(`drop index if exists "webhook_deliveries_leased_index";`)
  }
}
