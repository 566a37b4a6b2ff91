/**
 * A run's event log as a Server-Sent Event answer (docs/api/runs.md, "Following a run" and
 * "One-request streaming"), written once for both ways to get one: `GET /api/v1/runs/{run_uuid}/events`
 * (./run-events.routes.ts) and a run request that asked for its events (`POST agents/{x}/run`,
 * `threads/{x}/run`, `prompts/{x}/run` with `Accept: text/event-stream` or `stream: true`, through
 * ./rest-handler.ts). Each event is `id: <seq>` / `event: <type>` / `data: <JSON>`; the stream
 * ends after the run's final event (`run.succeeded`, `run.failed`, `run.canceled`). A comment line
 * every 15 s keeps proxies from closing an idle stream. When the process starts shutting down,
 * the stream gets a `reconnect` event (and `retry: 1000`) and ends: the client resumes with
 * `GET runs/{x}/events` and `Last-Event-ID` on any process (the log is in the database).
 * A client that disconnects stops only its stream, never the run.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ResourceCtx } from '../context.ts'
import { FINAL_EVENT_TYPES } from '../runs/index.ts'
import { toRunEvent, type TRunResult } from '../runs/index.ts'
import { runs } from '../runs/index.ts'
import type { Ctx } from '../trpc/context.ts'

/** Milliseconds between keep-alive comments. */
const KEEP_ALIVE_MS = 15_000
/** Milliseconds an EventSource waits before it reconnects after a shutdown ended its stream. */
const RECONNECT_RETRY_MS = 1_000

/** What {@link streamRunEvents} needs beside the request. */
export interface RunStreamOptions {
  /** The last event id the client has (0: from the start). */
  after: number
  /** Aborted when the host starts draining (shutdown): the stream is told to reconnect, then ends. */
  draining?: AbortSignal
  /** Headers of the answer beside the stream's own and those already set on `reply` (X-Request-Id). */
  headers?: Record<string, string>
}

/**
 * Answers the events of the caller's run `runUuid` after `options.after` on `reply` (see the
 * module comment); resolves once the stream has ended. Nothing is written before the run is
 * found, so its errors still answer as JSON.
 * @throws NotFoundError when the caller has no such run (before anything is written).
 */
export async function streamRunEvents(reply: FastifyReply, ctx: ResourceCtx, runUuid: string, options: RunStreamOptions): Promise<void> {
  const gone = new AbortController()
  const { draining, after } = options
  const stop = draining ? AbortSignal.any([gone.signal, draining]) : gone.signal
  const events = await runs.events(ctx, runUuid, after, stop)

  reply.hijack()
  const res = reply.raw
  // What the reply holds already (X-Request-Id, headers a procedure set): hijacked, Fastify writes none of it.
  for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) res.setHeader(name, value)
  res.writeHead(200, {
    ...options.headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  res.flushHeaders()
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS)
  const onClose = () => gone.abort()
  res.on('close', onClose)
  // A client that left while the run was being looked up: its `close` has been and gone.
  if (res.destroyed) gone.abort()
  let last = after
  let ended = false
  // Events that are ready together (a read of the log, a batch stored at once) go out in one
  // socket write rather than one each: the response is corked at the first and uncorked once
  // the loop waits for more (a tick runs only after the promise jobs that deliver ready events),
  // and before it ends (Node writes the end of a chunked body ahead of what a cork still holds).
  let corked = false
  const uncork = () => {
    if (!corked) return
    corked = false
    res.uncork()
  }
  try {
    for await (const event of events) {
      const wire = toRunEvent(event)
      last = wire.id
      ended = FINAL_EVENT_TYPES.has(wire.type)
      if (!corked) {
        corked = true
        res.cork()
        process.nextTick(uncork)
      }
      res.write(`id: ${wire.id}\nevent: ${wire.type}\ndata: ${JSON.stringify(wire)}\n\n`)
    }
    if (draining?.aborted && !gone.signal.aborted && !ended) {
      // The follower stopped because this process is shutting down, not because the run ended.
      const wire = {
        message: 'The service is shutting down; reconnect with Last-Event-ID',
        last_event_id: last,
        retry_ms: RECONNECT_RETRY_MS,
      }
      res.write(`retry: ${RECONNECT_RETRY_MS}\nevent: reconnect\ndata: ${JSON.stringify(wire)}\n\n`)
    }
  } catch (error) {
    if (!gone.signal.aborted && !draining?.aborted) {
      reply.log.error({ err: error }, 'run event stream failed')
      res.write(`event: error\ndata: ${JSON.stringify({ message: 'The event stream failed; reconnect with Last-Event-ID' })}\n\n`)
    }
  } finally {
    uncork()
    clearInterval(keepAlive)
    res.off('close', onClose)
    res.end()
  }
}

/** A REST call's context once a workspace procedure has run: it set `auth` and `workspace` in place (src/trpc/init.ts). */
const inWorkspace = (ctx: Ctx): ctx is Ctx & ResourceCtx => ctx.auth !== undefined && ctx.workspace !== undefined

/**
 * The REST handler's answer for a run procedure asked for a stream (./rest-handler.ts,
 * `streamAnswer`): the run the procedure started in the background, as {@link streamRunEvents}
 * from its first event, with `X-Run-UUID` (and `X-Thread-UUID` for a run in a thread) so that a
 * client can resume before it has read an event.
 * @throws Error when `ctx` is not a workspace call's or `data` not a run answer (a wiring fault: a 500 before any stream).
 */
export function runAnswerStream(draining?: AbortSignal) {
  return async (_request: FastifyRequest, reply: FastifyReply, ctx: Ctx, data: unknown): Promise<void> => {
    const run = (data as Partial<TRunResult> | undefined)?.data?.run
    if (!inWorkspace(ctx) || typeof run?.uuid !== 'string') throw new Error('A run stream needs a workspace call that answered a run')
    const headers: Record<string, string> = { 'x-run-uuid': run.uuid }
    if (run.thread_uuid) headers['x-thread-uuid'] = run.thread_uuid
    await streamRunEvents(reply, ctx, run.uuid, { after: 0, draining, headers })
  }
}
