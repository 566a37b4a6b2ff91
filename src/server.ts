/**
 * Process entry of `npm start`: configuration, database (migrated before listening), HTTP host,
 * graceful shutdown (docs/operations.md, "Shutdown": new requests get 503 while in-flight work
 * finishes, what is still running is handed over, then connections close).
 */
// First: it clears empty provider variables before the AI SDK's modules load (see the module).
import './provider-env.ts'
import { createRuntime } from './app.ts'
import { buildHttpApp } from './http/app.ts'
import { configOrExit, onShutdown } from './process.ts'

const config = configOrExit()
const runtime = await createRuntime(config)
const { app, front } = await buildHttpApp(runtime)
await app.listen({ port: config.port, host: config.host })
runtime.log.info(
  { mode: config.databaseUrl ? 'postgresql' : 'embedded (PGlite)', cache: config.redisUrl ? 'redis' : 'memory' },
  `listening on ${config.appUrl}`,
)
onShutdown(config, runtime.log, () => runtime.close(front))
