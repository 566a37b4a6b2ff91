/**
 * A weather API on loopback for the tests of HTTP tools (test/runs-tools.test.ts,
 * test/openai-compat.test.ts): `GET /weather?city=X` answers `{city: X, forecast: 'sunny'}`, and
 * every request's path and query is recorded in `requests`, and its `Idempotency-Key` header in
 * `idempotencyKeys` (clear both between tests).
 */
import { createServer } from 'node:http'

export interface WeatherServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string
  requests: string[]
  idempotencyKeys: (string | undefined)[]
  /** Each request's `traceparent` header (test/tracing.test.ts), undefined when it had none. */
  traceparents: (string | undefined)[]
  /** Awaited before each answer, when set (a test looks at the database while the call waits). */
  onRequest?: () => Promise<void>
  close: () => Promise<void>
}

export async function startWeatherServer(): Promise<WeatherServer> {
  const requests: string[] = []
  const idempotencyKeys: (string | undefined)[] = []
  const traceparents: (string | undefined)[] = []
  const state: WeatherServer = { url: '', requests, idempotencyKeys, traceparents, close: async () => {} }
  const server = createServer(async (req, res) => {
    requests.push(req.url ?? '')
    idempotencyKeys.push(req.headers['idempotency-key'] as string | undefined)
    traceparents.push(req.headers.traceparent as string | undefined)
    await state.onRequest?.()
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ city: new URL(req.url ?? '/', 'http://x').searchParams.get('city'), forecast: 'sunny' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  state.url = url
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return state
}

/** The body of `POST tools` for the weather API at `weather`: `GET /weather?city={{city}}`, a required `city`. */
export function weatherToolInput(weather: Pick<WeatherServer, 'url'>) {
  return {
    name: 'Weather',
    description: 'The forecast of a city',
    method: 'GET' as const,
    url: `${weather.url}/weather?city={{city}}`,
    input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  }
}

