/**
 * Process entry of `npm start`: configuration, database (migrated before listening), HTTP host,
 * graceful shutdown (in-flight requests finish, new ones get 503, then connections close).
 */
// First: it clears empty provider variables before the AI SDK's modules load (see the module).
import './provider-env.ts'
import { createRuntime } from './app.ts'
import { buildHttpApp } from './http/app.ts'
import { configOrExit, onShutdown } from './process.ts'

const config = configOrExit()
const runtime = await createRuntime(config)
const { app } = await buildHttpApp(runtime)
await app.listen({ port: config.port, host: config.host })
runtime.log.info(
  { mode: config.databaseUrl ? 'postgresql' : 'embedded (PGlite)', cache: config.redisUrl ? 'redis' : 'memory' },
  `listening on ${config.appUrl}`,
)
onShutdown(config, runtime.log, async () => {
  await app.close()
  await runtime.close()
})
