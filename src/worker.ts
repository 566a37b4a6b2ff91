/**
 * Process entry of `npm run worker` (API.md section 1, distributed mode): the same runtime as
 * `npm start` without the HTTP host. It works the job queue (workflow executions, schedule
 * firings) and runs the recovery sweep; start as many as the load needs, beside any number of
 * API processes started with `WORKER=false`. SIGTERM/SIGINT let running executions finish (up to
 * `SHUTDOWN_TIMEOUT_MS`), then end the rest `failed` (`interrupted`).
 */
import { createRuntime } from './app.ts'
import { configOrExit, onShutdown } from './process.ts'

const config = configOrExit()
const runtime = await createRuntime(config, { worker: true })
runtime.log.info({ mode: config.databaseUrl ? 'postgresql' : 'embedded (PGlite)' }, 'worker started')
onShutdown(config, runtime.log, () => runtime.close())
