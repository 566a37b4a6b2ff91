/**
 * Outbound webhook delivery (docs/api/webhooks.md, "Delivery"), across any number of processes.
 * It is a source of the process's one scheduler (src/platform/scheduler.ts), which decides when
 * to look; a notification on `outbox_events` (sent by the transaction that recorded an event,
 * when it commits) wakes it at once.
 *
 * - **Dispatch** ({@link WebhookEngine.fireDue}): the events of the outbox not dispatched yet are
 *   read with their payload `data` (./event-data.ts), and one statement marks them dispatched
 *   (only those still undispatched: another process that got there first wins) and inserts one
 *   delivery per event and active endpoint of the event's workspace subscribed to its type and
 *   created before the event (unique per endpoint and event). So each event is delivered once per endpoint whichever process
 *   dispatches it, and an event stays in the outbox until one does.
 * - **Due attempts**: a pending delivery whose next attempt has come, or whose job's lease ran
 *   out (the job was lost, or its worker died mid-attempt), gets a new lease and a new job of
 *   {@link DELIVER_JOB} whose id is the lease's token; the job may attempt only while it holds the
 *   token, so two jobs never attempt one delivery at once.
 * - **The deliver job** signs the payload with the endpoint's secrets (the previous one too for 24
 *   hours after a rotation; the `standardwebhooks` library signs), posts it through the outbound
 *   guard of tools (src/catalog/tool-http.ts) with the attempt timeout, a response-size cap and no
 *   redirects, records the attempt and the next one's due time (the retry delays), and keeps the
 *   endpoint's failure state: a `410 Gone` disables it at once, failures only for
 *   `WEBHOOK_DISABLE_AFTER_SECONDS` disable it with a reason.
 *
 * Jobs are grouped by endpoint ({@link ENDPOINT_CONCURRENCY} at once), so a slow endpoint holds a
 * few of the worker's slots, never all of them.
 */
import pLimit from 'p-limit'
import type { Logger } from '../platform/logger.ts'
import type { Config } from '../platform/config.ts'
import { prepared, type Orm } from '../platform/db.ts'
import { inSpan, markSpanFailed, SpanKind } from '../platform/tracing.ts'
import { ATTR_HTTP_RESPONSE_STATUS_CODE } from '@opentelemetry/semantic-conventions'
import type { JobInfo, JobQueue } from '../platform/queue.ts'
import type { DueScheduler, DueSource } from '../platform/scheduler.ts'
import { listen, type Unlisten } from '../platform/notify.ts'
import { toDate } from '../platform/sql.ts'
import { databaseUnavailable } from '../platform/errors.ts'
import { iso } from '../access/wire.ts'
import type { EventDataReader, OutboxRow } from './event-data.ts'
import { attempt, type EndpointSecrets } from './delivery.ts'
import { countDeliveryAttempt } from './delivery-metrics.ts'

/** The deliver job's name: `{delivery_id}`, sent with the lease token as its id. */
export const DELIVER_JOB = 'webhooks.deliver'
/** The notification channel the outbox's triggers notify. */
export const OUTBOX_CHANNEL = 'outbox_events'
/** Events, and due deliveries, one statement takes at most; the look loops while batches come back full. */
const BATCH = 200
/** Deliveries of one endpoint attempted at once across the workers. */
const ENDPOINT_CONCURRENCY = 4
/**
 * Events of a batch whose `data` is read at once (each read is a few statements through the
 * services, on the process's pool): one after another, the reads of a large batch held back its
 * deliveries and every event behind it.
 */
const READ_CONCURRENCY = 4
/** Deliver jobs one process works at once. */
const LOCAL_CONCURRENCY = 16
/** Seconds a sent deliver job may wait in the queue before its attempt is sent again. */
const QUEUE_WAIT_SECONDS = 60
/** Seconds an attempt that has ended may take to be recorded. */
const RECORD_SECONDS = 5
/** Milliseconds between two removals of events dispatched over a day ago. */
const PRUNE_MS = 10 * 60_000

/**
 * The deliver job's two statements, prepared (planned once per pooled connection: every attempt
 * runs both, and planning them was a third of their time). The lease: the delivery, if the job
 * still holds its token, with its endpoint, for `secs` more.
 */
const leaseStatement = prepared(
  'webhook_delivery_lease',
  `update webhook_deliveries d set locked_until = now() + make_interval(secs => ?::int)
   from webhook_endpoints e
   where d.id = ? and d.lock_token = ? and d.status = 'pending' and e.id = d.endpoint_id
   returning d.event_id as "eventId", d.event_type as "eventType", d.payload, jsonb_array_length(d.attempts) as attempts,
     d.max_attempts as "maxAttempts", e.id::float8 as "endpointId", e.uuid as "endpointUuid", e.url, e.is_active as "isActive",
     e.secret_ciphertext as "secretCiphertext", e.secret_key_id as "secretKeyId",
     case when e.previous_secret_expires_at > now() then e.previous_secret_ciphertext end as "previousCiphertext",
     case when e.previous_secret_expires_at > now() then e.previous_secret_key_id end as "previousKeyId"`,
)
/**
 * The attempt's record: appended to the delivery's attempts with its new status and next due time,
 * the lease released, if the job still holds it; a success also clears the endpoint's failure
 * state (one round trip for both).
 */
const recordStatement = prepared(
  'webhook_delivery_record',
  `with cleared as (update webhook_endpoints set failing_since = null where ?::boolean and id = ? and failing_since is not null)
   update webhook_deliveries set attempts = attempts || ?::jsonb, status = ?,
     next_attempt_at = case when ?::int is null then null else now() + make_interval(secs => ?::int) end,
     lock_token = null, locked_until = null, updated_at = now()
   where id = ? and lock_token = ?`,
)

/** An endpoint's failure state after a failed attempt (see `#noteFailure`); prepared, as a failing endpoint runs it on every attempt. */
const failureStatement = prepared(
  'webhook_endpoint_failure',
  `update webhook_endpoints set failing_since = coalesce(failing_since, now()),
     is_active = case when ?::boolean or failing_since < now() - make_interval(secs => ?::int) then false else is_active end,
     disabled_reason = case
       when not is_active then disabled_reason
       when ?::boolean then 'The endpoint answered 410 Gone'
       when failing_since < now() - make_interval(secs => ?::int) then 'Every delivery attempt failed for ' || ?::int || ' seconds'
       else disabled_reason end,
     updated_at = case when ?::boolean or failing_since < now() - make_interval(secs => ?::int) then now() else updated_at end
   where id = ? returning id, is_active as "isActive"`,
)

/** A row of {@link leaseStatement}: what an attempt needs of the delivery and its endpoint. */
function leased(row: Record<string, unknown>): EndpointSecrets & {
  eventId: string
  eventType: string
  payload: string
  attempts: number
  maxAttempts: number
  endpointId: number
  isActive: boolean
} {
  const text = (value: unknown) => (typeof value === 'string' ? value : null)
  return {
    eventId: String(row.eventId),
    eventType: String(row.eventType),
    payload: String(row.payload),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.maxAttempts),
    endpointId: Number(row.endpointId),
    endpointUuid: String(row.endpointUuid),
    url: String(row.url),
    isActive: row.isActive === true,
    secretCiphertext: String(row.secretCiphertext),
    secretKeyId: String(row.secretKeyId),
    previousCiphertext: text(row.previousCiphertext),
    previousKeyId: text(row.previousKeyId),
  }
}

/** The deliver job's data. */
interface DeliverJob {
  delivery_id: number
}

/** What the engine is built from. */
export interface WebhookEngineOptions {
  orm: Orm
  config: Config
  log: Logger
  jobs: JobQueue
  scheduler: DueScheduler
}

/** See the module comment. */
export class WebhookEngine implements DueSource {
  readonly name = 'webhooks'
  #read: EventDataReader | undefined
  #unlisten: Unlisten | undefined
  #prunedAt = 0
  #closed = false

  private constructor(private readonly options: WebhookEngineOptions) {}

  /** Registers the deliver job with the queue and the engine with the scheduler. */
  static create(options: WebhookEngineOptions): WebhookEngine {
    const engine = new WebhookEngine(options)
    options.jobs.register<DeliverJob>(DELIVER_JOB, (data, job) => engine.#deliver(data, job), {
      // A failed attempt is scheduled again by the engine (the retry delays), not by the queue; a
      // worker that dies mid-attempt loses its lease, and the next look sends the attempt again.
      retryLimit: 0,
      expireInSeconds: Math.ceil(options.config.webhooks.timeoutMs / 1000) + QUEUE_WAIT_SECONDS,
      heartbeatSeconds: 10,
      localConcurrency: LOCAL_CONCURRENCY,
      groupConcurrency: ENDPOINT_CONCURRENCY,
    })
    options.scheduler.register(engine)
    return engine
  }

  /** Hands the engine the reader of events' `data` (the services, src/app.ts). */
  bind(read: EventDataReader): void {
    this.#read = read
  }

  /** Seconds a sent job holds a delivery before it starts: time to be fetched from the queue, plus the attempt. */
  get #leaseSeconds(): number {
    return Math.ceil(this.options.config.webhooks.timeoutMs / 1000) + QUEUE_WAIT_SECONDS
  }

  /**
   * Seconds a started attempt holds its delivery: the attempt's timeout plus time to record it;
   * a worker that died mid-attempt loses the delivery this long after it started.
   */
  get #attemptLeaseSeconds(): number {
    return Math.ceil(this.options.config.webhooks.timeoutMs / 1000) + RECORD_SECONDS
  }

  /** Listens for recorded events (a process that works the queue); the scheduler then looks at once. */
  async start(): Promise<void> {
    const { orm, config, log, scheduler } = this.options
    this.#unlisten = await listen(orm, config.databaseUrl, OUTBOX_CHANNEL, () => scheduler.wake(new Date()), log)
  }

  /** Stops listening. */
  async close(): Promise<void> {
    this.#closed = true
    await this.#unlisten?.()
  }

  /**
   * The earliest of: an undispatched event, a due attempt of an endpoint below its lease cap (an
   * endpoint at its cap sends its next attempt when one ends, see {@link #send}), a lease that
   * runs out.
   */
  async earliestDue(): Promise<Date | null> {
    const [row] = await this.options.orm.em.fork().execute<{ due: Date | string | null }[]>(
      `select least(
         (select created_at from outbox_events where dispatched_at is null order by id limit 1),
         (select min(w.due) from webhook_endpoints e
          cross join lateral (
            select d.next_attempt_at as due from webhook_deliveries d
            where d.endpoint_id = e.id and d.status = 'pending' and d.lock_token is null order by d.next_attempt_at limit 1) w
          where (select count(*) from webhook_deliveries h
                 where h.endpoint_id = e.id and h.status = 'pending' and h.lock_token is not null and h.locked_until > now()) < ?),
         (select min(locked_until) from webhook_deliveries where status = 'pending' and lock_token is not null)) as due`,
      [ENDPOINT_CONCURRENCY],
    )
    return row?.due ? toDate(row.due) : null
  }

  /**
   * Dispatches the outbox's events and sends a job for every due attempt, a batch of events at a
   * time: the deliveries of each batch are sent before the next batch is read, so a backlog in the
   * outbox does not hold back the attempts already dispatched. Answers how many of both.
   */
  async fireDue(): Promise<number> {
    let done = 0
    for (;;) {
      const dispatched = await this.#dispatch()
      done += dispatched
      for (;;) {
        const sent = await this.sendDue()
        done += sent
        if (sent < BATCH) break
      }
      if (dispatched < BATCH) break
    }
    if (Date.now() - this.#prunedAt > PRUNE_MS) {
      this.#prunedAt = Date.now()
      await this.options.orm.em
        .fork()
        .execute(
          `delete from outbox_events where id in (select id from outbox_events where dispatched_at < now() - interval '1 day' limit 1000)`,
        )
    }
    return done
  }

  /** One batch of {@link fireDue}'s dispatch. Answers the events it took. */
  async #dispatch(): Promise<number> {
    const em = this.options.orm.em.fork()
    const events = await em.execute<OutboxRow[]>(
      `select o.id::float8 as id, o.uuid, o.type, o.workspace_id::float8 as "workspaceId", w.uuid as "workspaceUuid", o.data,
         o.subject_uuid as "subjectUuid", o.actor_id::float8 as "actorId", o.created_at as "createdAt"
       from outbox_events o join workspaces w on w.id = o.workspace_id
       where o.dispatched_at is null order by o.id limit ?`,
      [BATCH],
    )
    if (events.length === 0) return 0
    const read = this.#read
    if (!read) throw new Error('The webhook engine has no event reader: bind one before it starts')
    const payloads = await pLimit(READ_CONCURRENCY).map(events, async (event) => {
      const data = await this.#readData(read, event)
      if (data === null) this.options.log.debug({ event: event.type, event_id: event.uuid }, 'webhook event not sent: its resource is gone')
      const payload =
        data === null
          ? null
          : JSON.stringify({ id: event.uuid, type: event.type, timestamp: iso(event.createdAt), workspace_uuid: event.workspaceUuid, data })
      return { id: event.id, payload }
    })
    await em.execute(
      `with events as (select * from jsonb_to_recordset(?::jsonb) as x(id bigint, payload text)),
       claimed as (
         update outbox_events o set dispatched_at = now() from events x
         where o.id = x.id and o.dispatched_at is null returning o.id, o.uuid, o.type, o.workspace_id, o.created_at)
       insert into webhook_deliveries (uuid, endpoint_id, workspace_id, event_id, event_type, status, attempts, max_attempts, next_attempt_at, payload, created_at, updated_at)
       select gen_random_uuid(), e.id, c.workspace_id, c.uuid, c.type, 'pending', '[]'::jsonb, ?, now(), x.payload, now(), now()
       from claimed c join events x on x.id = c.id and x.payload is not null
       join webhook_endpoints e on e.workspace_id = c.workspace_id and e.is_active and e.created_at <= c.created_at
         and (e.event_types @> '["*"]'::jsonb or e.event_types @> jsonb_build_array(c.type))
       on conflict (endpoint_id, event_id) do nothing`,
      [JSON.stringify(payloads), this.options.config.webhooks.retryDelays.length + 1],
    )
    return events.length
  }

  /**
   * An event's `data`, or null when it cannot be sent: its resource is gone, or reading it failed
   * for a fault of ours (logged; the outbox must not stall behind one event). A lost database is
   * thrown: the whole batch is dispatched again at the next look.
   */
  async #readData(read: EventDataReader, event: OutboxRow): Promise<Record<string, unknown> | null> {
    try {
      return await read({
        ...event,
        data: typeof event.data === 'string' ? (JSON.parse(event.data) as Record<string, unknown>) : event.data,
      })
    } catch (error) {
      if (databaseUnavailable(error)) throw error
      this.options.log.error({ err: error, event: event.type, event_id: event.uuid }, 'webhook event not sent: its data could not be read')
      return null
    }
  }

  /**
   * Leases up to one batch of due attempts and sends their jobs; answers how many. Also what a
   * ping or a redelivery calls to attempt at once rather than at the next look.
   * @param deliveryIds only these deliveries (each leased only if it is due).
   */
  async sendDue(deliveryIds?: number[]): Promise<number> {
    return this.#send(deliveryIds ? { deliveryIds } : {})
  }

  /**
   * Leases due attempts, at most {@link BATCH}, and sends their jobs; answers how many. An
   * endpoint gets no more than {@link ENDPOINT_CONCURRENCY} leases at once (counting those whose
   * jobs are in the queue or under way): the queue would hold further jobs of its group back, and
   * a worker that skipped them would look again only at its next poll (5 s), so a burst of more
   * than that to one endpoint waited seconds. The rest wait here, and each attempt that ends sends
   * the next of its endpoint ({@link #deliver}). Two processes leasing at once may pass the cap
   * by a little: the queue's group limit still holds the attempts.
   */
  async #send(only: { deliveryIds?: number[]; endpointId?: number }): Promise<number> {
    const endpointFilter = only.endpointId !== undefined ? 'where e.id = ?' : ''
    const deliveryFilter = only.deliveryIds ? 'and d.id = any(?::bigint[])' : ''
    const params: unknown[] = []
    if (only.deliveryIds) params.push(`{${only.deliveryIds.join(',')}}`)
    params.push(ENDPOINT_CONCURRENCY)
    if (only.endpointId !== undefined) params.push(only.endpointId)
    const leased = await this.options.orm.em.fork().execute<{ id: string | number; token: string; endpoint: string }[]>(
      // Per endpoint (an index range each, whatever the backlog): the leases it holds, then its
      // earliest due attempts (whose time came, or whose lease ran out) up to its cap, locked,
      // skipping those another process is leasing now.
      `with chosen as (
         select c.id from webhook_endpoints e
         cross join lateral (
           select count(*)::int as n from webhook_deliveries h
           where h.endpoint_id = e.id and h.status = 'pending' and h.lock_token is not null and h.locked_until > now()) held
         cross join lateral (
           select d.id from webhook_deliveries d
           where d.endpoint_id = e.id and d.status = 'pending' and d.next_attempt_at <= now()
             and (d.lock_token is null or d.locked_until <= now()) ${deliveryFilter}
           order by d.next_attempt_at limit greatest(0, ? - held.n) for update of d skip locked) c
         ${endpointFilter}
         limit ?)
       update webhook_deliveries d set lock_token = gen_random_uuid(), locked_until = now() + make_interval(secs => ?), updated_at = now()
       from webhook_endpoints e
       where e.id = d.endpoint_id and d.id in (select id from chosen)
       returning d.id::float8 as id, d.lock_token as token, e.uuid as endpoint`,
      [...params, BATCH, this.#leaseSeconds],
    )
    if (leased.length === 0) return 0
    // A send that fails leaves the lease to run out: the next look sends the attempt again.
    await this.options.jobs.sendMany<DeliverJob>(
      DELIVER_JOB,
      leased.map((row) => ({ data: { delivery_id: Number(row.id) }, id: row.token, group: row.endpoint })),
    )
    return leased.length
  }

  /** The deliver job: one attempt of one delivery, if the job still holds its lease. */
  async #deliver(data: DeliverJob, job: JobInfo): Promise<void> {
    if (this.#closed) return
    const { orm, config, log } = this.options
    const em = orm.em.fork()
    const [found] = await leaseStatement(orm, () => em, [this.#attemptLeaseSeconds, data.delivery_id, job.id])
    // Another job holds the lease now, or the delivery ended meanwhile.
    if (!found) return
    const row = leased(found)
    const ping = row.eventType === 'webhook_endpoint.ping'
    if (!row.isActive && !ping) {
      await em.execute(
        `update webhook_deliveries set status = 'failed', next_attempt_at = null, lock_token = null, locked_until = null, updated_at = now()
         where id = ? and lock_token = ?`,
        [data.delivery_id, job.id],
      )
      return
    }
    const outcome = await inSpan(
      `webhook_delivery ${row.eventType}`,
      {
        kind: SpanKind.CLIENT,
        attributes: { 'webhook.event_type': row.eventType, 'webhook.event_id': row.eventId, 'webhook.delivery_id': data.delivery_id, 'webhook.attempt': row.attempts + 1 },
      },
      async (span) => {
        const outcome = await attempt(config, row, row.eventId, row.payload)
        if (outcome.record.status_code !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.record.status_code)
        if (!outcome.ok) markSpanFailed(span, outcome.record.status_code === null ? 'request_failed' : String(outcome.record.status_code), outcome.record.error ?? undefined)
        return outcome
      },
    )
    const count = row.attempts + 1
    const gone = outcome.record.status_code === 410
    const retry = !outcome.ok && !gone && count < row.maxAttempts
    const delays = config.webhooks.retryDelays
    const status = outcome.ok ? 'succeeded' : retry ? 'pending' : 'failed'
    const delay = retry ? (delays[Math.min(count - 1, delays.length - 1)] ?? 0) : null
    countDeliveryAttempt(status)
    await recordStatement(orm, () => em, [
      outcome.ok,
      row.endpointId,
      JSON.stringify([outcome.record]),
      status,
      delay,
      delay,
      data.delivery_id,
      job.id,
    ])
    log.debug(
      { delivery_id: data.delivery_id, event: row.eventType, status_code: outcome.record.status_code, ok: outcome.ok },
      'webhook attempt',
    )
    if (!outcome.ok) await this.#noteFailure(row.endpointId, gone)
    // The lease this attempt held is free: the endpoint's next due attempt goes now, not at the next look.
    await this.#send({ endpointId: row.endpointId }).catch((error: unknown) =>
      log.warn({ err: error, delivery_id: data.delivery_id }, 'sending the next webhook attempt failed'),
    )
  }

  /**
   * Keeps an endpoint's failure state after a failed attempt (a success clears it as it is
   * recorded): a `410 Gone` disables the endpoint at once; failures only since over
   * `WEBHOOK_DISABLE_AFTER_SECONDS` disable it. A disabled endpoint's pending deliveries fail
   * (pings excepted).
   */
  async #noteFailure(endpointId: number, gone: boolean): Promise<void> {
    const { orm, config } = this.options
    const em = orm.em.fork()
    const days = config.webhooks.disableAfterSeconds
    const [endpoint] = await failureStatement(orm, () => em, [gone, days, gone, days, days, gone, days, endpointId])
    if (endpoint?.isActive === false) {
      await em.execute(
        `update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = now()
         where endpoint_id = ? and status = 'pending' and lock_token is null and event_type <> 'webhook_endpoint.ping'`,
        [endpointId],
      )
    }
  }
}
