/**
 * What `npm run bench:runs` (bench/runs.ts) reads from outside the service, which exposes
 * nothing new for it:
 *
 * - {@link memoryOf}: a process's resident set (and its peak since {@link resetPeak}) from Linux's
 *   /proc, what `ps -o rss=` shows;
 * - {@link Inspector}: V8's heap through the Node inspector of a child started with
 *   `--inspect=127.0.0.1:<port>` (loopback only, a benchmark child): heap used, and a full GC on
 *   request so that a heap that merely was not collected yet is told apart from a leak;
 * - {@link SqlCounter}: a PostgreSQL wire-protocol pass-through proxy that counts the statements
 *   of each client message cycle, groups them by shape and sums the time the server took to answer
 *   them (from the client's query to ReadyForQuery), to see where a run's time goes.
 */
import { once } from 'node:events'
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type Server, type Socket, connect } from 'node:net'
import WebSocket from 'ws'

/** Resident set and its high-water mark of a process, in bytes; null without /proc. */
export function memoryOf(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
    return { rss: field('VmRSS'), peak: field('VmHWM') }
  } catch {
    return null
  }
}

/** Resets the process's resident-set high-water mark (Linux ≥ 4.0, own processes); false if it cannot. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** A Chrome DevTools Protocol session on a child's Node inspector. */
export class Inspector {
  readonly #ws: WebSocket
  #next = 0
  readonly #pending = new Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>()

  private constructor(ws: WebSocket) {
    this.#ws = ws
    ws.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { id?: number; result?: unknown; error?: { message: string } }
      if (message.id === undefined) return
      const waiter = this.#pending.get(message.id)
      this.#pending.delete(message.id)
      if (message.error) waiter?.reject(new Error(message.error.message))
      else waiter?.resolve(message.result)
    })
  }

  /** Connects to the inspector listening on 127.0.0.1:`port`. */
  static async connect(port: number): Promise<Inspector> {
    const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as { webSocketDebuggerUrl: string }[]
    const url = targets[0]?.webSocketDebuggerUrl
    if (!url) throw new Error(`no inspector target on port ${port}`)
    const ws = new WebSocket(url)
    await once(ws, 'open')
    return new Inspector(ws)
  }

  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#next
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      this.#ws.send(JSON.stringify({ id, method, params }))
    })
  }

  /** V8 heap used, in bytes. */
  async heapUsed(): Promise<number> {
    return (await this.call<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize
  }

  /** A full garbage collection in the child. */
  async collectGarbage(): Promise<void> {
    await this.call('HeapProfiler.collectGarbage')
  }

  close(): void {
    this.#ws.close()
  }
}

/** Statements counted by {@link SqlCounter}, by shape. */
export interface SqlCounts {
  /** Statements sent (simple queries and extended-protocol executions). */
  statements: number
  /** Client message cycles (each ends with the server's ReadyForQuery): round trips. */
  roundTrips: number
  /** Milliseconds between each cycle's first client message and the server's ReadyForQuery, summed. */
  serverMs: number
  /** Statements by shape (literals replaced, first 90 characters). */
  byShape: Map<string, number>
}

/** One statement cycle: from the client's first message to the server's ReadyForQuery. */
export interface TimelineEntry {
  startMs: number
  endMs: number
  /** The shape of the cycle's first statement. */
  shape: string
}

/** A statement's text with literals replaced, whitespace collapsed, cut at 90 characters. */
function shapeOf(sql: string): string {
  return sql
    .replace(/'(?:[^']|'')*'/g, "'…'")
    .replace(/\$\d+/g, '$n')
    .replace(/\b\d+(?:\.\d+)?\b/g, 'N')
    .replace(
      /\(\s*(?:(?:'…'|N|\$n|null|true|false|default)(?:::\w+)?\s*,\s*)+(?:'…'|N|\$n|null|true|false|default)(?:::\w+)?\s*\)/gi,
      '(…)',
    )
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 90)
}

/** See the module comment: listen, point a client at `url`, `take()` the counts so far. */
export class SqlCounter {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  #counts: SqlCounts = { statements: 0, roundTrips: 0, serverMs: 0, byShape: new Map() }
  /** Statement cycles while recording ({@link record}), on `performance.now()`'s clock. */
  #timeline: TimelineEntry[] | null = null

  private constructor(server: Server) {
    this.#server = server
  }

  /** Starts a proxy on 127.0.0.1 to PostgreSQL at `target`; `url` is `databaseUrl` through it. */
  static async start(databaseUrl: string): Promise<{ counter: SqlCounter; url: string }> {
    const target = new URL(databaseUrl)
    let counter: SqlCounter | undefined = undefined
    const server = createServer((client) => counter?.handle(client, target.hostname, Number(target.port || 5432)))
    counter = new SqlCounter(server)
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    const address = server.address()
    const url = new URL(databaseUrl)
    url.host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    url.searchParams.set('sslmode', 'disable')
    return { counter, url: url.href }
  }

  /** Starts recording a timeline of statement cycles. */
  record(): void {
    this.#timeline = []
  }

  /** Stops recording and answers the timeline. */
  timeline(): TimelineEntry[] {
    const timeline = this.#timeline ?? []
    this.#timeline = null
    return timeline
  }

  /** The counts since the last call, and starts counting anew. */
  take(): SqlCounts {
    const counts = this.#counts
    this.#counts = { statements: 0, roundTrips: 0, serverMs: 0, byShape: new Map() }
    return counts
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    this.#server.close()
    await once(this.#server, 'close')
  }

  #count(text: string): string {
    this.#counts.statements += 1
    const shape = shapeOf(text)
    this.#counts.byShape.set(shape, (this.#counts.byShape.get(shape) ?? 0) + 1)
    return shape
  }

  handle(client: Socket, host: string, port: number): void {
    const server = connect(port, host)
    this.#sockets.add(client).add(server)
    const close = () => {
      client.destroy()
      server.destroy()
      this.#sockets.delete(client)
      this.#sockets.delete(server)
    }
    client.on('error', close).on('close', close)
    server.on('error', close).on('close', close)

    // Client -> server: untyped startup messages first, then typed ones.
    let started = false
    let skipFromServer = 0
    let fromClient: Buffer = Buffer.alloc(0)
    const statements = new Map<string, string>()
    let portalStatement = ''
    let busySince: number | null = null
    let cycleShape = ''
    client.on('data', (chunk: Buffer) => {
      server.write(chunk)
      fromClient = fromClient.length ? Buffer.concat([fromClient, chunk]) : chunk
      for (;;) {
        if (!started) {
          if (fromClient.length < 8) break
          const length = fromClient.readInt32BE(0)
          if (fromClient.length < length) break
          const code = fromClient.readInt32BE(4)
          if (code === 80877103 || code === 80877104)
            skipFromServer = 1 // SSL / GSS request: one byte answers
          else started = true
          fromClient = fromClient.subarray(length)
          continue
        }
        if (fromClient.length < 5) break
        const type = String.fromCharCode(fromClient[0])
        const length = fromClient.readInt32BE(1)
        if (fromClient.length < 1 + length) break
        const body = fromClient.subarray(5, 1 + length)
        fromClient = fromClient.subarray(1 + length)
        const cstring = (from: number) => {
          const end = body.indexOf(0, from)
          return { text: body.toString('utf8', from, end), next: end + 1 }
        }
        if (type === 'Q' || type === 'P' || type === 'B') {
          if (busySince === null) cycleShape = ''
          busySince ??= performance.now()
        }
        if (type === 'Q') cycleShape ||= this.#count(cstring(0).text)
        else if (type === 'P') {
          const name = cstring(0)
          statements.set(name.text, cstring(name.next).text)
        } else if (type === 'B') {
          const portal = cstring(0)
          portalStatement = statements.get(cstring(portal.next).text) ?? ''
        } else if (type === 'E') cycleShape ||= this.#count(portalStatement)
      }
    })

    // Server -> client: ReadyForQuery ('Z') ends a cycle.
    let fromServer: Buffer = Buffer.alloc(0)
    server.on('data', (chunk: Buffer) => {
      client.write(chunk)
      fromServer = fromServer.length ? Buffer.concat([fromServer, chunk]) : chunk
      if (skipFromServer > 0) {
        const skip = Math.min(skipFromServer, fromServer.length)
        fromServer = fromServer.subarray(skip)
        skipFromServer -= skip
      }
      while (fromServer.length >= 5) {
        const length = fromServer.readInt32BE(1)
        if (fromServer.length < 1 + length) break
        const type = String.fromCharCode(fromServer[0])
        fromServer = fromServer.subarray(1 + length)
        if (type === 'Z' && busySince !== null) {
          const end = performance.now()
          this.#counts.roundTrips += 1
          this.#counts.serverMs += end - busySince
          this.#timeline?.push({ startMs: busySince, endMs: end, shape: cycleShape })
          busySince = null
        }
      }
    })
  }
}
