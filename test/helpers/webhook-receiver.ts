/**
 * A webhook receiver on loopback for tests and benchmarks: records every request (headers and
 * raw body) and answers each as told: a status (default 200), a hang, a body of a given size, or a
 * connection closed mid-answer. Verification is the caller's, with the `standardwebhooks` package.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request the receiver got. */
export interface Received {
  headers: Record<string, string>
  body: string
  at: number
}

/** How to answer one request. */
export type Answer =
  { status: number; body?: string } | { hang: true } | { bytes: number } | { close: true } | { delayMs: number; status: number }

export interface Receiver {
  url: string
  received: Received[]
  /** Answers the next requests in this order; then `fallback`. */
  enqueue(...answers: Answer[]): void
  /** How requests are answered once the queue is empty (default `{status: 200}`). */
  fallback: Answer
  /** Resolves once `count` requests arrived (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>
  close(): Promise<void>
}

/** Starts a receiver on 127.0.0.1 with an OS-chosen port. */
export async function startReceiver(): Promise<Receiver> {
  const queue: Answer[] = []
  const received: Received[] = []
  const waiters: (() => void)[] = []
  const receiver = {} as Receiver
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({ headers: request.headers as Record<string, string>, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() })
      for (const wake of waiters.splice(0)) wake()
      const answer = queue.shift() ?? receiver.fallback
      if ('hang' in answer) return
      if ('close' in answer) {
        response.writeHead(200, { 'content-length': '1000' })
        response.write('partial')
        response.socket?.destroy()
        return
      }
      if ('bytes' in answer) {
        response.writeHead(200, { 'content-type': 'text/plain' })
        response.end(Buffer.alloc(answer.bytes, 'x'))
        return
      }
      const send = () =>
        response
          .writeHead(answer.status, { 'content-type': 'text/plain' })
          .end('body' in answer && answer.body !== undefined ? answer.body : `answered ${answer.status}`)
      if ('delayMs' in answer) setTimeout(send, answer.delayMs)
      else send()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  Object.assign(receiver, {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    fallback: { status: 200 },
    enqueue: (...answers: Answer[]) => queue.push(...answers),
    waitFor: async (count: number, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        const left = deadline - Date.now()
        if (left <= 0) throw new Error(`The receiver got ${received.length} of ${count} requests within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left)
          waiters.push(() => (clearTimeout(timer), resolve()))
        })
      }
      return received
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
  return receiver
}
