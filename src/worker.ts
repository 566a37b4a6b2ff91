/**
 * Process entry of `npm run worker` (API.md section 1, distributed mode): the same runtime as
 * `npm start` without the HTTP host. It works the job queue (workflow executions, schedule
 * firings) and runs the recovery sweep; start as many as the load needs, beside any number of
 * API processes started with `WORKER=false`. SIGTERM/SIGINT let running executions finish (up to
 * `SHUTDOWN_TIMEOUT_MS`), then end the rest `failed` (`interrupted`).
 */
import { createRuntime } from './app.ts'
import { type Config, ConfigError, loadConfig, loadDotEnv } from './config.ts'

loadDotEnv()
let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(`Configuration error: ${error.message}`)
  process.exit(1)
}

const runtime = await createRuntime(config, { worker: true })
runtime.log.info({ mode: config.databaseUrl ? 'postgresql' : 'embedded (PGlite)' }, 'worker started')

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  runtime.log.info({ signal }, 'worker shutting down')
  const timer = setTimeout(() => {
    runtime.log.error('shutdown timed out; exiting')
    process.exit(1)
  }, config.shutdownTimeoutMs + 5_000)
  timer.unref()
  await runtime.close()
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
