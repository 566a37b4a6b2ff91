/**
 * Benchmark row (a): a bare node:http server answering every request with the exact body and
 * Content-Type that `GET /api/v1/ping` answers (given by the parent in BENCH_BODY_BASE64 and
 * BENCH_CONTENT_TYPE). The ceiling of Node's HTTP stack on this machine; no framework, no work.
 */
import { createServer } from 'node:http'

const body = Buffer.from(process.env.BENCH_BODY_BASE64 ?? '', 'base64')
const headers = { 'content-type': process.env.BENCH_CONTENT_TYPE ?? 'application/json; charset=utf-8', 'content-length': body.length }

const server = createServer((_req, res) => {
  res.writeHead(200, headers)
  res.end(body)
})
server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => process.exit(0)))
