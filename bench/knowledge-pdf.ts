/**
 * `npm run bench:knowledge-pdf`: one large PDF trained on PostgreSQL (docs/benchmarks.md,
 * "Knowledge benchmark"): how long its ingestion takes, how far the service's resident memory
 * grows meanwhile, and whether the API keeps answering: the latency of `GET /api/v1/user`,
 * requested one after another, when idle and during the ingestion.
 *
 * The PDF is written by pdfkit (a dev dependency of the tests) with its content streams left
 * uncompressed, so its size is mostly text: BENCH_PDF_MB megabytes (default 50) of pages of prose.
 * The service runs with UPLOAD_MAX_BYTES raised to take it, and the tests' upstream (full-text
 * retrieval here: this PostgreSQL has no pgvector, so no embedding calls).
 *
 * The requests during the ingestion grow the service's main heap by themselves: V8 collects the
 * garbage they leave in its old generation late, about 200 MB later on this machine. Two switches
 * tell that growth apart from the ingestion's: BENCH_PDF_REQUESTS=0 sends none during the
 * ingestion, and BENCH_PDF_CONTROL_SECONDS=N trains nothing and sends the requests for N seconds.
 *
 * Environment: BENCH_DATABASE_URL (as the other benchmarks), BENCH_PDF_MB (50), BENCH_IDLE_SECONDS (10),
 * BENCH_PDF_REQUESTS (1), BENCH_PDF_CONTROL_SECONDS (none).
 */
import { setTimeout as sleep } from 'node:timers/promises'
import PDFDocument from 'pdfkit'
import { type Bench, envNumber, fmt, runBench, signUp, startService } from './harness.ts'
import { memoryOf, resetPeak } from './runs-probes.ts'
import { Corpus } from './knowledge-corpus.ts'

const PDF_MB = envNumber('BENCH_PDF_MB', 50)
const IDLE_SECONDS = envNumber('BENCH_IDLE_SECONDS', 10)
const REQUESTS = process.env.BENCH_PDF_REQUESTS !== '0'
const CONTROL_SECONDS = process.env.BENCH_PDF_CONTROL_SECONDS ? envNumber('BENCH_PDF_CONTROL_SECONDS', 0) : null

/** A PDF of about `megabytes` MB of uncompressed text pages. */
async function makePdf(megabytes: number): Promise<Buffer> {
  const doc = new PDFDocument({ compress: false, autoFirstPage: false })
  const parts: Buffer[] = []
  doc.on('data', (part: Buffer) => parts.push(part))
  const done = new Promise<Buffer>((resolve) => doc.on('end', () => resolve(Buffer.concat(parts))))
  const corpus = new Corpus(7)
  let written = 0
  while (written < megabytes * 1024 * 1024) {
    doc.addPage({ margin: 20, size: 'A4' })
    const text = corpus.text(3_000)
    doc.fontSize(4).text(text)
    // Each character costs about 3 bytes of content stream once laid out in lines.
    written += text.length * 3
  }
  doc.end()
  return done
}

const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
}

/** `GET /api/v1/user` one after another until `until` resolves; answers the latencies in ms. */
async function userLatencies(url: string, token: string, until: Promise<unknown>): Promise<number[]> {
  let stop = false
  void until.then(() => (stop = true))
  const latencies: number[] = []
  while (!stop) {
    const started = performance.now()
    const res = await fetch(`${url}/api/v1/user`, { headers: { authorization: `Bearer ${token}` } })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`GET /api/v1/user answered ${res.status}`)
    latencies.push(performance.now() - started)
  }
  return latencies
}

async function main(bench: Bench): Promise<void> {
  const pdfStarted = performance.now()
  const pdf = await makePdf(PDF_MB)
  console.log(`PDF of ${fmt(pdf.length / 1024 / 1024, 1)} MB written in ${fmt((performance.now() - pdfStarted) / 1000, 1)} s`)
  const service = await startService(bench, [], { UPLOAD_MAX_BYTES: String(pdf.length + 1024 * 1024) })
  const pid = service.process.pid!
  const { token } = await signUp(service.url, 'Pdf Bench', `pdf-${Date.now()}@example.com`)
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    })
    const json = (await res.json()) as { data: any }
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`)
    return json.data
  }
  const agent = await call('POST', '/api/v1/agents', { name: 'Manual reader' })
  const form = new FormData()
  form.append('file', new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }), 'manual.pdf')
  const uploaded = await fetch(`${service.url}/api/v1/media`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form })
  const media = ((await uploaded.json()) as { data: { key: string } }).data
  if (uploaded.status !== 201) throw new Error(`upload answered ${uploaded.status}`)

  const idle = await userLatencies(service.url, token, sleep(IDLE_SECONDS * 1000))
  await sleep(500)
  resetPeak(pid)
  const before = memoryOf(pid)
  const started = performance.now()
  const [doc] = CONTROL_SECONDS === null ? await call('POST', `/api/v1/agents/${agent.uuid}/train`, { sources: [{ type: 'file', key: media.key }] }) : [null]
  let peak = before?.rss ?? 0
  const sampler = setInterval(() => (peak = Math.max(peak, memoryOf(pid)?.rss ?? 0)), 100)
  const ended = (async () => {
    if (CONTROL_SECONDS !== null) {
      await sleep(CONTROL_SECONDS * 1000)
      return { status: 'not trained (control)', chunks_count: 0, tokens_count: 0 }
    }
    for (;;) {
      const found = await call('GET', `/api/v1/knowledge/${doc.uuid}`)
      if (found.status === 'ready' || found.status === 'failed') return found
      await sleep(250)
    }
  })()
  const during = REQUESTS ? await userLatencies(service.url, token, ended) : (await ended, [])
  const result = await ended
  clearInterval(sampler)
  const seconds = (performance.now() - started) / 1000
  const after = memoryOf(pid)
  const kernelPeak = after?.peak ?? peak
  const mb = (bytes: number | undefined) => fmt((bytes ?? 0) / 1024 / 1024)
  const lines = [
    `Large PDF ingestion on PostgreSQL ${bench.postgres}, ${new Date().toISOString()}:`,
    '',
    '| measurement | result |',
    '| --- | ---: |',
    `| PDF | ${fmt(pdf.length / 1024 / 1024, 1)} MB |`,
    `| document | ${result.status}${result.error ? ` (${result.error})` : ''}, ${fmt(result.chunks_count)} chunks, ${fmt(result.tokens_count)} tokens |`,
    `| train to ${result.status} | ${fmt(seconds, 1)} s |`,
    `| service RSS before / peak (VmHWM) / growth | ${mb(before?.rss)} / ${mb(Math.max(peak, kernelPeak))} / ${mb(Math.max(peak, kernelPeak) - (before?.rss ?? 0))} MB |`,
    `| \`GET /api/v1/user\` idle: n, p50 / p99 | ${idle.length}, ${fmt(quantile(idle, 0.5), 2)} / ${fmt(quantile(idle, 0.99), 2)} ms |`,
    ...(REQUESTS
      ? [
          `| \`GET /api/v1/user\` during the ingestion: n, p50 / p99 | ${during.length}, ${fmt(quantile(during, 0.5), 2)} / ${fmt(quantile(during, 0.99), 2)} ms |`,
          `| p99 during / idle | ${fmt(quantile(during, 0.99) / quantile(idle, 0.99), 2)}x (target ≤ 2x) |`,
        ]
      : ['| `GET /api/v1/user` during the ingestion | none sent (BENCH_PDF_REQUESTS=0) |']),
  ]
  console.log(lines.join('\n'))
}

await runBench('aw_bench_kpdf', main)
