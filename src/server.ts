/**
 * Process entry of `npm start`: configuration, database (migrated before listening), HTTP host,
 * graceful shutdown (docs/operations.md, "Shutdown": new requests get 503 while in-flight work
 * finishes, what is still running is handed over, then connections close).
 */
// First: it clears empty provider variables before the AI SDK's modules load (see the module).
import './provider-env.ts'
import { createRuntime } from './app.ts'
import { buildHttpApp } from './http/app.ts'
import { ensureConsoleBuilt } from './http/console-build.ts'
import { configOrExit, onShutdown } from './process.ts'

const config = configOrExit()
const runtime = await createRuntime(config)
// The web console is built ahead of serving, on the first start after its sources change (docs/console.md).
// A console that fails to build leaves the API serving: /console answers the last build, or 503.
const consoleBuild = await ensureConsoleBuilt(runtime.log).catch((error: unknown) => {
  runtime.log.error({ err: error }, 'the web console failed to build')
  return 'failed' as const
})
if (consoleBuild === 'unavailable') runtime.log.warn('the web console is not built and Vite is not installed: /console answers 503')
const { app, front } = await buildHttpApp(runtime)
await app.listen({ port: config.port, host: config.host })
// The one line a person starting the service looks for: where it answers, on what, and whether it works the queue.
const storage = config.databaseUrl ? 'PostgreSQL' : 'embedded PGlite'
const worker = config.worker ? 'in this process' : 'off (WORKER=false: other processes work the queue)'
runtime.log.info(
  { url: config.appUrl, storage, cache: config.redisUrl ? 'redis' : 'memory', worker: config.worker },
  `listening on ${config.appUrl} (storage: ${storage}; worker: ${worker})`,
)
onShutdown(config, runtime.log, () => runtime.close(front))
