/**
 * Child processes of the benchmark: each server runs in its own Node process (the service, and
 * the bare baselines), so that autocannon in the parent shares an event loop with none of them.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { NODE_FLAGS } from '../src/node-flags.ts'
import { freePort } from '../test/helpers/ports.ts'

/** A started server child. */
export interface Child {
  name: string
  url: string
  process: ChildProcess
}

/**
 * Starts `file` (TypeScript) under the same Node as the parent with tsx's loader (what the
 * `tsx` CLI does, minus its wrapper process, so signals and --cpu-prof reach the server itself),
 * then waits until `readyPath` answers 200.
 */
export async function startChild(
  name: string,
  file: string,
  env: Record<string, string>,
  options: { readyPath?: string; nodeArgs?: string[]; timeoutMs?: number; cwd?: string } = {},
): Promise<Child> {
  const port = await freePort()
  const child = spawn(process.execPath, [...NODE_FLAGS, ...(options.nodeArgs ?? []), '--import', 'tsx', file], {
    cwd: options.cwd,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  let exited = false
  child.once('exit', () => (exited = true))
  for (;;) {
    if (exited) throw new Error(`${name} exited before it was ready (code ${child.exitCode})`)
    try {
      const response = await fetch(url + (options.readyPath ?? '/'), { signal: AbortSignal.timeout(2_000) })
      await response.arrayBuffer()
      if (response.ok) return { name, url, process: child }
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`${name} was not ready within ${options.timeoutMs ?? 60_000} ms`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export async function stopChild(child: Child, graceMs = 10_000): Promise<void> {
  const proc = child.process
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = once(proc, 'exit')
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

/** Starts bench/runs-upstream.ts (the tests' upstream in its own process) and reads its URL from its first stdout line. */
export async function startUpstreamChild(): Promise<Child> {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'bench/runs-upstream.ts'], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout! })
  const exited = once(child, 'exit').then(() => {
    throw new Error(`upstream exited before it was ready (code ${child.exitCode})`)
  })
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string]
  lines.close()
  child.stdout!.resume()
  const { url } = JSON.parse(line) as { url: string }
  return { name: 'upstream', url, process: child }
}
