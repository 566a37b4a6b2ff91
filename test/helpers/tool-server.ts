/**
 * A weather API on loopback for the tests of HTTP tools (test/runs-tools.test.ts,
 * test/openai-compat.test.ts): `GET /weather?city=X` answers `{city: X, forecast: 'sunny'}`, and
 * every request's path and query is recorded in `requests` (clear it between tests).
 */
import { createServer } from 'node:http'

export interface WeatherServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string
  requests: string[]
  close: () => Promise<void>
}

export async function startWeatherServer(): Promise<WeatherServer> {
  const requests: string[] = []
  const server = createServer((req, res) => {
    requests.push(req.url ?? '')
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ city: new URL(req.url ?? '/', 'http://x').searchParams.get('city'), forecast: 'sunny' }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  return { url, requests, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}
