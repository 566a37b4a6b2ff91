/**
 * Process entry of `npm start`: configuration, database (migrated before listening), HTTP host,
 * graceful shutdown (in-flight requests finish, new ones get 503, then connections close).
 */
import { createRuntime } from './app.ts'
import { type Config, ConfigError, loadConfig, loadDotEnv } from './config.ts'
import { buildHttpApp } from './http/app.ts'

loadDotEnv()
let config: Config
try {
  config = loadConfig()
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  console.error(`Configuration error: ${error.message}`)
  process.exit(1)
}

const runtime = await createRuntime(config)
const { app } = await buildHttpApp(runtime)
await app.listen({ port: config.port, host: config.host })
runtime.log.info(
  { mode: config.databaseUrl ? 'postgresql' : 'embedded (PGlite)', cache: config.redisUrl ? 'redis' : 'memory' },
  `listening on ${config.appUrl}`,
)

let stopping = false
async function shutdown(signal: string) {
  if (stopping) return
  stopping = true
  runtime.log.info({ signal }, 'shutting down')
  const timer = setTimeout(() => {
    runtime.log.error('shutdown timed out; exiting')
    process.exit(1)
  }, config.shutdownTimeoutMs + 5_000)
  timer.unref()
  await app.close()
  await runtime.close()
  process.exit(0)
}
process.on('SIGTERM', () => void shutdown('SIGTERM'))
process.on('SIGINT', () => void shutdown('SIGINT'))
