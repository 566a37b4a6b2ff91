/**
 * Benchmark row (b): a bare node:http route doing one primary-key SELECT through a `pg` Pool of
 * 10 (the service's default pool size) against the benchmark database. The cost of one
 * database round trip without any framework on top.
 */
import { createServer } from 'node:http'
import pg from 'pg'

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 })
const userId = Number(process.env.BENCH_USER_ID)
const SQL = 'select id, email from users where id = $1'

const server = createServer((_req, res) => {
  pool.query(SQL, [userId]).then(
    (result) => {
      const body = JSON.stringify({ data: result.rows[0] ?? null })
      res.writeHead(result.rows.length ? 200 : 404, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(body),
      })
      res.end(body)
    },
    (error: unknown) => {
      console.error(error)
      res.writeHead(500).end()
    },
  )
})
server.listen(Number(process.env.PORT), '127.0.0.1')
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))))
