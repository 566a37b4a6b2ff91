/**
 * Reads Server-Sent Events responses (test/runs.test.ts, test/runs-stream-post.test.ts): status,
 * content type and every event as `{id, event, data}`, comments skipped, either to the end of the
 * stream ({@link readSse}) or event by event with the connection dropped at will ({@link openSse}).
 * The answer is checked against the OpenAPI document (./contract.ts): an error's JSON body, a
 * stream's status.
 */
import { checkAnswer } from './contract.ts'

/** One event of the stream. */
export interface SseEvent {
  id: string | undefined
  event: string
  data: string
}

/** The request: GET by default; a `body` is sent as JSON. */
export interface SseRequest {
  method?: string
  body?: unknown
}

/** One event block (the text between blank lines), or undefined when it holds only comments. */
function parseBlock(block: string): SseEvent | undefined {
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
  return seen ? event : undefined
}

/** Every event of a whole stream's text. */
export function parseSse(body: string): SseEvent[] {
  return body.split('\n\n').flatMap((block) => parseBlock(block) ?? [])
}

/** Sends the request (Accept: text/event-stream unless `headers` say otherwise). */
function request(url: string, headers: Record<string, string>, init: SseRequest, signal?: AbortSignal): Promise<Response> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body)
  const contentType: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' }
  return fetch(url, { method: init.method ?? 'GET', headers: { accept: 'text/event-stream', ...contentType, ...headers }, body, signal })
}

/** Requests `url` with `headers` and reads the whole stream (the server ends it). */
export async function readSse(
  url: string,
  headers: Record<string, string>,
  init: SseRequest = {},
): Promise<{ status: number; contentType: string; headers: Headers; events: SseEvent[]; body: string }> {
  const res = await request(url, headers, init)
  const body = await res.text()
  const contentType = res.headers.get('content-type')
  checkAnswer(init.method ?? 'GET', url, res.status, contentType, contentType?.startsWith('application/json') ? JSON.parse(body) : body)
  return { status: res.status, contentType: contentType ?? '', headers: res.headers, events: parseSse(body), body }
}

/** A stream read event by event: `next()` is undefined once it ended; `drop()` closes the connection. */
export interface OpenSse {
  status: number
  headers: Headers
  next: () => Promise<SseEvent | undefined>
  drop: () => void
}

/** Requests `url` and answers as soon as the headers came; a 200 stream's events are read with `next()`. */
export async function openSse(url: string, headers: Record<string, string>, init: SseRequest = {}): Promise<OpenSse> {
  const controller = new AbortController()
  const res = await request(url, headers, init, controller.signal)
  const contentType = res.headers.get('content-type')
  if (!contentType?.startsWith('text/event-stream'))
    throw new Error(`Expected an event stream, got ${res.status} ${contentType}: ${await res.text()}`)
  checkAnswer(init.method ?? 'GET', url, res.status, contentType, null)
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ''
  const next = async (): Promise<SseEvent | undefined> => {
    for (;;) {
      const end = buffer.indexOf('\n\n')
      if (end !== -1) {
        const block = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const event = parseBlock(block)
        if (event) return event
        continue
      }
      const { value, done } = await reader.read()
      if (done) return undefined
      buffer += value
    }
  }
  return { status: res.status, headers: res.headers, next, drop: () => controller.abort() }
}
