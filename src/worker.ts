/**
 * Process entry of `npm run worker` (docs/api/conventions.md, distributed mode): the same runtime as
 * `npm start` without the HTTP host. It works the job queue (workflow executions, schedule
 * firings) and runs the recovery sweep; start as many as the load needs, beside any number of
 * API processes started with `WORKER=false`. SIGTERM/SIGINT stop fetching jobs and let running
 * executions finish (up to `SHUTDOWN_TIMEOUT_MS`), then hand the rest back to the queue or end them
 * `failed` (`interrupted`), per their workflow's `on_interrupt`. Distributed mode only: without
 * `DATABASE_URL` it refuses to start (embedded mode works the queue inside `npm start`). It listens
 * on no port, so it serves no `GET /metrics`: what it counts is not exposed (docs/operations.md,
 * "Metrics").
 */
// First: it clears empty provider variables before the AI SDK's modules load (src/provider-env.ts).
import './provider-env.ts'
import { createRuntime } from './app.ts'
import { configOrExit, onShutdown } from './process.ts'

const config = configOrExit()
if (!config.databaseUrl) {
  // PGlite is one process's database: a second process on the same DATA_DIR would corrupt it.
  console.error('Configuration error: DATABASE_URL: npm run worker needs PostgreSQL; in embedded mode npm start works the queue itself')
  process.exit(1)
}
const runtime = await createRuntime(config, { worker: true })
// A worker works from the start, even on a database where no job was ever sent (the queue of a
// process that only may work it starts lazily, on its first send).
await runtime.jobs.start()
runtime.log.info({ mode: 'postgresql' }, 'worker started')
onShutdown(config, runtime.log, () => runtime.close())
