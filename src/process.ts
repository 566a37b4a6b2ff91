/**
 * What the two process entries (`npm start`: server.ts, `npm run worker`: worker.ts) share: the
 * configuration read once (a bad one stops the process with a message naming the variable) and a
 * graceful shutdown on SIGTERM/SIGINT bounded by `SHUTDOWN_TIMEOUT_MS` + 5 s.
 */
import { type Config, ConfigError, loadConfig, loadDotEnv } from './platform/config.ts'

/** The configuration from `.env` and the environment; exits with code 1 on a bad one. */
export function configOrExit(): Config {
  loadDotEnv()
  try {
    return loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`Configuration error: ${error.message}`)
    process.exit(1)
  }
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits 0; exits 1 when it takes longer than the
 * shutdown timeout plus 5 s. `stop` (the runtime's close, src/app.ts) bounds each of its steps,
 * so the exit on time is a last resort, not the way a shutdown normally ends.
 */
export function onShutdown(config: Config, log: { info: (o: object, m: string) => void; error: (m: string) => void }, stop: () => Promise<void>): void {
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.info({ signal }, 'shutting down')
    const timer = setTimeout(() => {
      log.error('shutdown timed out; exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs + 5_000)
    timer.unref()
    const started = Date.now()
    await stop()
    log.info({ ms: Date.now() - started }, 'shut down')
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}
