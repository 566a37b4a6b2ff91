/**
 * Reads a Server-Sent Events response to its end (test/runs.test.ts): status, content type and
 * every event as `{id, event, data}`, comments skipped. The answer is checked against the OpenAPI
 * document (./contract.ts): an error's JSON body, a stream's status.
 */
import { checkAnswer } from './contract.ts'

/** One event of the stream. */
export interface SseEvent {
  id: string | undefined
  event: string
  data: string
}

/** Requests `url` with `headers` and reads the whole stream (the server ends it). */
export async function readSse(url: string, headers: Record<string, string>): Promise<{ status: number; contentType: string; events: SseEvent[] }> {
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers } })
  const body = await res.text()
  const contentType = res.headers.get('content-type')
  checkAnswer('GET', url, res.status, contentType, contentType?.startsWith('application/json') ? JSON.parse(body) : body)
  const events: SseEvent[] = []
  for (const block of body.split('\n\n')) {
    const event: SseEvent = { id: undefined, event: 'message', data: '' }
    let seen = false
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue
      const colon = line.indexOf(':')
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '')
      seen = true
      if (field === 'id') event.id = value
      else if (field === 'event') event.event = value
      else if (field === 'data') event.data = event.data ? `${event.data}\n${value}` : value
    }
    if (seen) events.push(event)
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', events }
}
