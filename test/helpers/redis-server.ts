/**
 * A Redis server of a test's own (test/faults-redis.test.ts): `redis-server` as a child process
 * on a free loopback port, which the test may stop (SIGKILL, as a crash), start again on the
 * same port, or pause. The shared Redis of the other tests (REDIS_URL) is never touched.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { createClient } from '@keyv/redis'
import { freePort } from './ports.ts'

/** See the module comment. */
export interface RedisServer {
  /** `redis://:<password>@127.0.0.1:<port>`. */
  url: string
  port: number
  /** Kills the server (SIGKILL: no goodbye to its clients) and waits until it has exited. */
  stop: () => Promise<void>
  /** Starts it again on the same port, empty; resolves once it accepts connections. */
  start: () => Promise<void>
  /** Runs one command on a connection of its own (e.g. `CLIENT PAUSE 1500 WRITE`), answers the reply. */
  command: (...args: string[]) => Promise<unknown>
  /**
   * Sends `signal` to the running server: SIGSTOP stalls it (its port still accepts connections,
   * nothing is answered), SIGCONT lets it go on (bench/redis-outage.ts).
   */
  signal: (signal: NodeJS.Signals) => void
}

/**
 * Starts `redis-server --port N --save '' --appendonly no` with `requirepass password`.
 * @throws when it does not accept connections within 10 s.
 */
export async function startRedisServer(password: string): Promise<RedisServer> {
  const port = await freePort()
  let child: ChildProcess | undefined

  const start = async () => {
    const proc = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--requirepass', password],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    child = proc
    let output = ''
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start on port ${port}: ${output}`)), 10_000)
      const onData = (chunk: Buffer) => {
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer)
          resolve()
        }
      }
      proc.stdout?.on('data', onData)
      proc.stderr?.on('data', onData)
      proc.once('exit', (code) => {
        clearTimeout(timer)
        reject(new Error(`redis-server exited with ${code}: ${output}`))
      })
      proc.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`redis-server could not be started (is it on the PATH?): ${error.message}`))
      })
    })
  }

  const stop = async () => {
    const proc = child
    child = undefined
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return
    const exited = once(proc, 'exit')
    proc.kill('SIGKILL')
    await exited
  }

  const url = `redis://:${password}@127.0.0.1:${port}`
  const command = async (...args: string[]) => {
    const client = createClient({ url })
    await client.connect()
    try {
      return await client.sendCommand(args)
    } finally {
      client.destroy()
    }
  }

  const signal = (name: NodeJS.Signals) => void child?.kill(name)

  await start()
  return { url, port, start, stop, command, signal }
}
