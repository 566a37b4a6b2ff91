/**
 * The audit log's retention (docs/api/audit.md, "Retention"): events older than
 * `AUDIT_RETENTION_DAYS` are removed, a batch at a time, by a source of the process's one
 * scheduler (src/platform/scheduler.ts), which looks when the oldest event comes of age. The only
 * removal of events there is.
 */
import type { Config } from '../platform/config.ts'
import type { Orm } from '../platform/db.ts'
import type { DueScheduler, DueSource } from '../platform/scheduler.ts'
import { toDate } from '../platform/sql.ts'

/** Events one statement removes at most; the sweep loops while batches come back full. */
const BATCH = 1_000

/** See the module comment. */
export class AuditRetention implements DueSource {
  readonly name = 'audit-retention'

  private constructor(
    private readonly orm: Orm,
    private readonly config: Config,
  ) {}

  /** Registers the sweep with the scheduler. */
  static create(options: { orm: Orm; config: Config; scheduler: DueScheduler }): AuditRetention {
    const retention = new AuditRetention(options.orm, options.config)
    options.scheduler.register(retention)
    return retention
  }

  /** When the oldest event comes of age (the `occurred_at` index's first entry). */
  async earliestDue(): Promise<Date | null> {
    const [row] = await this.orm.em
      .fork()
      .execute<{ due: Date | string | null }[]>(
        `select min(occurred_at) + make_interval(days => ?) as due from audit_events`,
        [this.config.audit.retentionDays],
      )
    return row?.due ? toDate(row.due) : null
  }

  /** Removes every event past the retention. Answers how many. */
  async fireDue(): Promise<number> {
    let removed = 0
    for (;;) {
      const rows = await this.orm.em.fork().execute<{ id: number }[]>(
        `delete from audit_events where id in (
           select id from audit_events where occurred_at < now() - make_interval(days => ?) order by occurred_at limit ${BATCH})
         returning id`,
        [this.config.audit.retentionDays],
      )
      removed += rows.length
      if (rows.length < BATCH) return removed
    }
  }
}
