/**
 * `npm run bench:knowledge`: agent knowledge ("Train an Agent"; docs/api/knowledge.md) through
 * the public API, with the local OpenAI-compatible upstream of the tests
 * (test/helpers/upstream.ts: chat completions answered `Echo: <input>` at once, `/v1/embeddings`
 * deterministic 64-dimension vectors) in its own process, all over 127.0.0.1:
 *
 *   (1) ingestion: D text documents of B bytes each (English-like, bench/knowledge-corpus.ts),
 *       trained in batches of 20 sources per `POST /api/v1/agents/{uuid}/train`, until every
 *       one is `ready` (polling `GET /api/v1/agents/{uuid}/knowledge?status=ready`): documents
 *       per second end to end, the train requests' latency, the CPU of the service and of the
 *       database's PostgreSQL backends per document, and the service process's resident memory
 *       (baseline, peak sampled every 50 ms and the kernel's high-water mark VmHWM);
 *   (2) retrieval at K chunks: a second agent's chunks seeded with SQL straight into
 *       `knowledge_documents` / `knowledge_chunks` (English-like text of about one chunk's size;
 *       on a database with pgvector also a 64-dimension `embedding`, the upstream's vector of the
 *       text, and the ingested chunks' `embedding_model`), then `VACUUM ANALYZE`; then
 *       `POST /api/v1/agents/{uuid}/knowledge/search` with varied questions: N sequential (at most
 *       S seconds of them; p50/p90/p99, CPU per search), then autocannon at C connections, and the
 *       same sequentially on the agent of (1); recall@5 of the quality questions (below); the
 *       latency by how many chunks hold a word of the question; and `EXPLAIN (ANALYZE, BUFFERS)` of
 *       the service's retrieval statements (those src/knowledge/retrieval.ts runs, captured by
 *       calling it) for a few questions;
 *   (3) what retrieval adds to a run: `POST /api/v1/agents/{uuid}/run` answered when done, for
 *       the agent with `metadata.knowledge: true` and for the same agent with `knowledge: false`
 *       (toggled with `PUT`, in alternating blocks), on both agents: the ingested one (the chunks
 *       of (1)) and the seeded one (K chunks); added = p50 on - p50 off.
 *
 * Modes: PostgreSQL (a fresh database `aw_bench_knowledge_*` on BENCH_DATABASE_URL, dropped at the
 * end; full-text retrieval unless the server has pgvector) and PGlite (embedded, a temporary
 * DATA_DIR; PGlite loads pgvector, so retrieval is hybrid). On PGlite the service is stopped to
 * seed (the bench opens the same data directory) and again for the EXPLAIN.
 *
 * Quality: 50 questions, each about one seeded chunk (bench/knowledge-corpus.ts, `questionAbout`: a few of its rarest
 * words, some with a common word it does not hold), searched through the API: recall@5, the share whose chunk is
 * among the 5 answers.
 *
 * Targets: (2) search p50 <= 20 ms and p99 <= 60 ms at 100,000 chunks; (3) retrieval adds <= 25 ms to a run at p50.
 * The exit code is 0 whether or not a target is met (a measurement, not a test), 1 on an error.
 *
 * Environment (defaults keep a PostgreSQL run under about 5 minutes on 2 cores):
 *   BENCH_DATABASE_URL              admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_KNOWLEDGE_MODES           "postgres", "pglite" or "postgres,pglite" (default postgres)
 *   BENCH_KNOWLEDGE_DOCUMENTS       D, documents to ingest (default 1000)
 *   BENCH_KNOWLEDGE_DOCUMENT_BYTES  B, bytes of each (default 10240)
 *   BENCH_KNOWLEDGE_CHUNKS          K, chunks to seed (default 100000)
 *   BENCH_KNOWLEDGE_PGLITE_CHUNKS   K on PGlite (default K)
 *   BENCH_KNOWLEDGE_CHUNK_CHARS     characters of a seeded chunk (default 1600, about 400 tokens)
 *   BENCH_KNOWLEDGE_SEARCHES        N, sequential searches (default 500) ...
 *   BENCH_KNOWLEDGE_SEARCH_SECONDS  ... or fewer when they take longer than this (default 60)
 *   BENCH_KNOWLEDGE_WARMUP          sequential warm-up searches (default 30)
 *   BENCH_KNOWLEDGE_CONNECTIONS     C, autocannon connections (default 10)
 *   BENCH_KNOWLEDGE_DURATION        seconds of the autocannon run, after a 1 s warm-up (default 5)
 *   BENCH_KNOWLEDGE_RUNS            runs of each side (knowledge on, off) per agent (default 60)
 *   BENCH_KNOWLEDGE_RUN_WARMUP      warm-up runs of each side per agent (default 10)
 *   BENCH_KNOWLEDGE_EXPLAIN         questions explained (default 5)
 *   BENCH_KNOWLEDGE_INGEST_TIMEOUT  seconds from the first train request to wait for every document to be ready or
 *                                   failed (default 90); those still queued or processing then are deleted and the
 *                                   row says so
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { createOpenAI } from '@ai-sdk/openai'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import autocannon from 'autocannon'
import pg from 'pg'
import type { Em } from '../src/platform/db.ts'
import { retrieve } from '../src/knowledge/retrieval.ts'
import type { RetrievalMode } from '../src/knowledge/vector-store.ts'
import { testEmbedding } from '../test/helpers/upstream.ts'
import { readSse } from '../test/helpers/sse.ts'
import { cpuSeconds, cpuSnapshot, machineBusySeconds } from './cpu.ts'
import { type Bench, CHILD_ENV, expectOk, fmt, machineOf, runBench, signUp, writeResults } from './harness.ts'
import { Corpus, QUESTION_KINDS, type QuestionKind } from './knowledge-corpus.ts'
import { type Child, startChild, startUpstreamChild, stopChild } from './processes.ts'
import { memoryOf, resetPeak } from './runs-probes.ts'

/** A positive whole number from the environment, else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number >= 1`)
  return value
}

type Mode = 'postgres' | 'pglite'
const settings = {
  modes: (process.env.BENCH_KNOWLEDGE_MODES ?? 'postgres')
    .split(',')
    .map((mode) => mode.trim())
    .filter(Boolean) as Mode[],
  documents: envCount('BENCH_KNOWLEDGE_DOCUMENTS', 1000),
  documentBytes: envCount('BENCH_KNOWLEDGE_DOCUMENT_BYTES', 10_240),
  sourcesPerTrain: 20,
  chunks: envCount('BENCH_KNOWLEDGE_CHUNKS', 100_000),
  pgliteChunks: envCount('BENCH_KNOWLEDGE_PGLITE_CHUNKS', envCount('BENCH_KNOWLEDGE_CHUNKS', 100_000)),
  chunkChars: envCount('BENCH_KNOWLEDGE_CHUNK_CHARS', 1600),
  chunksPerDocument: 10,
  searches: envCount('BENCH_KNOWLEDGE_SEARCHES', 500),
  searchSeconds: envCount('BENCH_KNOWLEDGE_SEARCH_SECONDS', 60),
  warmup: envCount('BENCH_KNOWLEDGE_WARMUP', 30),
  connections: envCount('BENCH_KNOWLEDGE_CONNECTIONS', 10),
  durationSeconds: envCount('BENCH_KNOWLEDGE_DURATION', 5),
  runs: envCount('BENCH_KNOWLEDGE_RUNS', 60),
  runWarmup: envCount('BENCH_KNOWLEDGE_RUN_WARMUP', 10),
  explain: envCount('BENCH_KNOWLEDGE_EXPLAIN', 5),
  ingestTimeoutSeconds: envCount('BENCH_KNOWLEDGE_INGEST_TIMEOUT', 90),
  searchLimit: 5,
}
for (const mode of settings.modes)
  if (mode !== 'postgres' && mode !== 'pglite') throw new Error(`BENCH_KNOWLEDGE_MODES: unknown mode ${mode}`)

const SEARCH_TARGET_MS = 20
const SEARCH_P99_TARGET_MS = 60
/** Questions about one seeded chunk each, for recall@5. */
const QUALITY_QUESTIONS = 50
const SEARCH_TARGET_CHUNKS = 100_000
const RUN_ADDED_TARGET_MS = 25
const SYSTEM = 'Answer briefly.'
const now = () => performance.now()

// ---------------------------------------------------------------------------------------------
// Statistics

interface Summary {
  n: number
  p50: number
  p90: number
  p99: number
  mean: number
  max: number
}

/** Nearest-rank percentiles of `values` (ms). */
function summarise(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
  const mean = sorted.reduce((sum, value) => sum + value, 0) / (sorted.length || 1)
  return { n: sorted.length, p50: rank(0.5), p90: rank(0.9), p99: rank(0.99), mean, max: sorted.at(-1) ?? NaN }
}

/** `times` sequential calls of `once`. */
async function sequential<T>(times: number, once: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = []
  for (let index = 0; index < times; index++) results.push(await once(index))
  return results
}

/** Calls of `once` one after another until `times` are done or `seconds` have passed (at least one). */
async function sequentialFor<T>(times: number, seconds: number, once: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = []
  const deadline = now() + seconds * 1000
  for (let index = 0; index < times && (index === 0 || now() < deadline); index++) results.push(await once(index))
  return results
}

/** CPU ms per item of `pid` since `before` (seconds), null without /proc. */
const cpuMsPer = (pid: number, before: number | null, items: number) => {
  const after = cpuSeconds(pid)
  return before === null || after === null || items === 0 ? null : ((after - before) * 1000) / items
}

/** CPU seconds of the PostgreSQL backends: those in both snapshots by their delta, those only in `after` (started since) in full. */
function backendsCpu(before: Map<number, number>, after: Map<number, number>): number {
  let total = 0
  for (const [pid, seconds] of after) total += seconds - (before.get(pid) ?? 0)
  return total
}

// ---------------------------------------------------------------------------------------------
// Children and the database

/** Where a mode's data lives, and the service's environment (the same across restarts: APP_KEY). */
interface Target {
  mode: Mode
  env: Record<string, string>
  /** PGlite: the service's data directory (`DATA_DIR`). */
  dataDir: string | null
}

async function startKnowledgeService(bench: Bench, target: Target): Promise<Child> {
  const service = await startChild('service', 'src/server.ts', target.env, { readyPath: '/ready', timeoutMs: 120_000 })
  bench.children.push(service)
  return service
}

async function stopService(bench: Bench, service: Child): Promise<void> {
  await stopChild(service)
  bench.children.splice(bench.children.indexOf(service), 1)
}

/** SQL on the mode's database from this process: `pg` on PostgreSQL, PGlite on the (stopped) service's directory. */
interface Db {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>
  close(): Promise<void>
  /** Statements that may run at once (a pool of 2 connections on PostgreSQL, 1 on PGlite). */
  parallel: number
}

async function openDb(bench: Bench, target: Target): Promise<Db> {
  if (target.mode === 'postgres') {
    const pool = new pg.Pool({ connectionString: bench.databaseUrl, max: 2 })
    return {
      query: async <T>(sql: string, params: unknown[] = []) => (await pool.query(sql, params)).rows as T[],
      close: () => pool.end(),
      parallel: 2,
    }
  }
  const db = await PGlite.create(path.join(target.dataDir!, 'pglite'), { extensions: { vector } })
  return {
    query: async <T>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params)).rows,
    close: () => db.close(),
    parallel: 1,
  }
}

/** PIDs of the PostgreSQL backends connected to the benchmark database. */
async function backendPids(bench: Bench): Promise<number[]> {
  const result = await bench.admin.query<{ pid: number }>(
    "select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'",
    [bench.database],
  )
  return result.rows.map((row) => row.pid)
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Api {
  url: string
  token: string
}

const headersOf = (api: Api) => ({ authorization: `Bearer ${api.token}`, 'content-type': 'application/json' })

async function call<T>(api: Api, method: string, route: string, body?: unknown): Promise<T> {
  const response = await fetch(`${api.url}${route}`, {
    method,
    headers: headersOf(api),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return JSON.parse((await expectOk(response, `${method} ${route}`)).toString('utf8')) as T
}

async function createAgent(api: Api, name: string): Promise<string> {
  const created = await call<{ data: { uuid: string } }>(api, 'POST', '/api/v1/agents', {
    name,
    instruction: SYSTEM,
    metadata: { knowledge: true },
  })
  return created.data.uuid
}

/** How many of the agent's documents are in `status` (the list's total). */
async function countDocuments(
  api: Api,
  agentUuid: string,
  status: string,
): Promise<{ total: number; first: { error: string | null } | undefined }> {
  const page = await call<{ data: { error: string | null }[]; meta: { total: number } }>(
    api,
    'GET',
    `/api/v1/agents/${agentUuid}/knowledge?status=${status}&per_page=1`,
  )
  return { total: page.meta.total, first: page.data[0] }
}

// ---------------------------------------------------------------------------------------------
// (1) Ingestion

interface IngestResult {
  documents: number
  ready: number
  failed: number
  failedSample: string | null
  /** False when the documents were not all ready or failed within BENCH_KNOWLEDGE_INGEST_TIMEOUT (the rest were deleted). */
  finished: boolean
  /** Documents still queued or processing at the timeout, deleted through the API so that they do not disturb what follows. */
  discarded: number
  /** From the first train request to the last document ready (or to the timeout). */
  seconds: number
  /** Ready documents per second over `seconds`. */
  documentsPerSecond: number
  /** From the first train request to the last one answered, and how many documents were ready then. */
  trainSeconds: number
  readyAtTrainEnd: number
  train: Summary
  /** Ready documents over time (s from the first train request), one point per poll. */
  timeline: { seconds: number; ready: number }[]
  /** PostgreSQL: the ingestion jobs as the queue recorded them (pg-boss's `job` table). */
  jobs: { count: number; active: Summary; startGaps: Summary; longestIdleSeconds: number } | null
  chunks: number
  tokens: number
  /** CPU over the whole window (polling and idle waits included) per ready document. */
  serviceCpuMsPerDocument: number | null
  postgresCpuMsPerDocument: number | null
  memory: {
    baselineRss: number | null
    peakRssSampled: number | null
    vmHwm: number | null
    peakResetWorked: boolean
    afterRss: number | null
  }
}

/** Deletes the agent's documents still `queued` or `processing`; answers how many. */
async function discardUnfinished(api: Api, agentUuid: string): Promise<number> {
  let discarded = 0
  for (const status of ['queued', 'processing']) {
    for (;;) {
      const page = await call<{ data: { uuid: string }[] }>(
        api,
        'GET',
        `/api/v1/agents/${agentUuid}/knowledge?status=${status}&per_page=100`,
      )
      if (!page.data.length) break
      for (const doc of page.data) {
        const response = await fetch(`${api.url}/api/v1/knowledge/${doc.uuid}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${api.token}` },
        })
        await response.arrayBuffer()
        if (response.status === 204) discarded++
      }
    }
  }
  return discarded
}

/** The ingestion jobs' active times and the gaps between their starts, from pg-boss's table (PostgreSQL). */
async function jobTimings(bench: Bench): Promise<IngestResult['jobs']> {
  const client = new pg.Client({ connectionString: bench.databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ started: number; active: number | null }>(
      `select extract(epoch from started_on) * 1000 as started, extract(epoch from completed_on - started_on) * 1000 as active
       from pgboss.job where name = 'knowledge.ingest' and started_on is not null order by started_on`,
    )
    if (!rows.length) return null
    const starts = rows.map((row) => Number(row.started))
    const gaps = starts.slice(1).map((at, index) => at - starts[index])
    return {
      count: rows.length,
      active: summarise(rows.filter((row) => row.active !== null).map((row) => Number(row.active))),
      startGaps: summarise(gaps),
      longestIdleSeconds: Math.max(0, ...gaps) / 1000,
    }
  } catch (error) {
    console.warn(`no job timings (${String(error)})`)
    return null
  } finally {
    await client.end()
  }
}

async function ingest(bench: Bench, target: Target, api: Api, agentUuid: string, pid: number): Promise<IngestResult> {
  const corpus = new Corpus(1)
  const documents = Array.from({ length: settings.documents }, (_, index) => ({
    type: 'text' as const,
    name: `Handbook ${index + 1}`,
    text: corpus.text(settings.documentBytes, { title: `Handbook ${index + 1}: ${corpus.question()}`, exact: true }),
  }))
  const baselineRss = memoryOf(pid)?.rss ?? null
  const peakResetWorked = resetPeak(pid)
  let peakRss = baselineRss ?? 0
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryOf(pid)?.rss ?? 0)), 50)
  const postgres = target.mode === 'postgres'
  const backends0 = postgres ? cpuSnapshot(await backendPids(bench)) : null
  const service0 = cpuSeconds(pid)
  const start = now()
  const train: number[] = []
  const timeline: { seconds: number; ready: number }[] = []
  let trainSeconds: number
  let readyAtTrainEnd: number
  let counts: { ready: number; failed: number; failedSample: string | null }
  let finished = false
  try {
    for (let at = 0; at < documents.length; at += settings.sourcesPerTrain) {
      const sent = now()
      const answer = await call<{ data: { status: string }[] }>(api, 'POST', `/api/v1/agents/${agentUuid}/train`, {
        sources: documents.slice(at, at + settings.sourcesPerTrain),
      })
      train.push(now() - sent)
      if (answer.data.length !== Math.min(settings.sourcesPerTrain, documents.length - at))
        throw new Error(`train: ${answer.data.length} documents answered`)
    }
    trainSeconds = (now() - start) / 1000
    readyAtTrainEnd = (await countDocuments(api, agentUuid, 'ready')).total
    const deadline = start + settings.ingestTimeoutSeconds * 1000
    for (;;) {
      const [ready, failed] = await Promise.all([countDocuments(api, agentUuid, 'ready'), countDocuments(api, agentUuid, 'failed')])
      counts = { ready: ready.total, failed: failed.total, failedSample: failed.first?.error ?? null }
      timeline.push({ seconds: (now() - start) / 1000, ready: ready.total })
      if (ready.total + failed.total >= documents.length) {
        finished = true
        break
      }
      if (now() > deadline) break
      await sleep(200)
    }
  } finally {
    clearInterval(sampler)
  }
  const seconds = (now() - start) / 1000
  const serviceCpuMsPerDocument = cpuMsPer(pid, service0, counts.ready)
  const postgresCpuMsPerDocument =
    backends0 && counts.ready ? (backendsCpu(backends0, cpuSnapshot(await backendPids(bench))) * 1000) / counts.ready : null
  const memory = memoryOf(pid)
  const discarded = finished ? 0 : await discardUnfinished(api, agentUuid)
  if (!finished) {
    // What was being processed at the deletion finishes (and writes nothing) before the next part.
    await sleep(2000)
    const late = await countDocuments(api, agentUuid, 'ready')
    counts.ready = late.total
  }
  let chunks = 0
  let tokens = 0
  for (let page = 1; ; page++) {
    const listed = await call<{ data: { chunks_count: number; tokens_count: number }[]; meta: { last_page: number } }>(
      api,
      'GET',
      `/api/v1/agents/${agentUuid}/knowledge?per_page=100&page=${page}`,
    )
    for (const doc of listed.data) {
      chunks += doc.chunks_count
      tokens += doc.tokens_count
    }
    if (page >= listed.meta.last_page) break
  }
  return {
    documents: documents.length,
    ...counts,
    finished,
    discarded,
    seconds,
    documentsPerSecond: (timeline.at(-1)?.ready ?? 0) / seconds,
    trainSeconds,
    readyAtTrainEnd,
    train: summarise(train),
    timeline,
    jobs: postgres ? await jobTimings(bench) : null,
    chunks,
    tokens,
    serviceCpuMsPerDocument,
    postgresCpuMsPerDocument,
    memory: {
      baselineRss,
      peakRssSampled: peakRss || null,
      vmHwm: peakResetWorked ? (memory?.peak ?? null) : null,
      peakResetWorked,
      afterRss: memory?.rss ?? null,
    },
  }
}

// ---------------------------------------------------------------------------------------------
// (2) Seeding and search

interface Seeded {
  agentId: number
  chunks: number
  documents: number
  embeddingModel: string | null
  seconds: number
  tableMb: number | null
  /** The texts of the chunks asked for in `keep`, by their index. */
  kept: Map<number, string>
}

/**
 * Seeds `count` chunks of agent `agentUuid` with SQL (documents of {@link settings.chunksPerDocument} chunks), then VACUUM
 * ANALYZE; keeps the texts of the chunks whose indexes are in `keep`.
 */
async function seedChunks(db: Db, agentUuid: string, count: number, keep: Set<number>): Promise<Seeded> {
  const start = now()
  const [agent] = await db.query<{ id: string; user_id: string; workspace_id: string }>(
    'select id, user_id, workspace_id from agents where uuid = $1',
    [agentUuid],
  )
  const agentId = Number(agent.id)
  const hasEmbedding =
    (await db.query(`select 1 from information_schema.columns where table_name = 'knowledge_chunks' and column_name = 'embedding'`))
      .length > 0
  const [model] = hasEmbedding
    ? await db.query<{ model: string }>('select embedding_model as model from knowledge_chunks where embedding_model is not null limit 1')
    : []
  const embeddingModel = model?.model ?? null
  const documents = Math.ceil(count / settings.chunksPerDocument)
  const salt = randomBytes(8).toString('hex')
  const docIds = (
    await db.query<{ id: string }>(
      `insert into knowledge_documents (uuid, agent_id, user_id, workspace_id, name, source_type, mime_type, size_bytes, content_hash, status, chunks_count, tokens_count, created_at, updated_at)
       select gen_random_uuid(), $1, $2, $3, 'Seeded manual ' || g, 'text', 'text/plain', $4, encode(sha256(($5 || g)::bytea), 'hex'), 'ready', $6, $7, now(), now()
       from generate_series(1, $8::int) g order by g returning id`,
      [
        agentId,
        agent.user_id,
        agent.workspace_id,
        settings.chunkChars * settings.chunksPerDocument,
        salt,
        settings.chunksPerDocument,
        (settings.chunkChars / 4) * settings.chunksPerDocument,
        documents,
      ],
    )
  ).map((row) => Number(row.id))
  const corpus = new Corpus(2)
  const kept = new Map<number, string>()
  const batch = 1000
  const insert = (rows: object[]) =>
    db.query(
      `insert into knowledge_chunks (uuid, document_id, agent_id, position, text, tokens, created_at${embeddingModel ? ', embedding_model, embedding' : ''})
       select gen_random_uuid(), x.document_id, $1, x.position, x.text, x.tokens, now()${embeddingModel ? ', $3, x.embedding::vector' : ''}
       from jsonb_to_recordset($2::jsonb) as x(document_id bigint, position int, text text, tokens int, embedding text)`,
      embeddingModel ? [agentId, JSON.stringify(rows), embeddingModel] : [agentId, JSON.stringify(rows)],
    )
  // Batches are made here in order (one generator, so reproducible) and inserted `db.parallel` at a time.
  let next = 0
  const worker = async () => {
    while (next < count) {
      const at = next
      next += batch
      const rows = []
      for (let index = at; index < Math.min(count, at + batch); index++) {
        const text = corpus.text(settings.chunkChars)
        if (keep.has(index)) kept.set(index, text)
        rows.push({
          document_id: docIds[Math.floor(index / settings.chunksPerDocument)],
          position: index % settings.chunksPerDocument,
          text,
          tokens: Math.ceil(text.length / 4),
          ...(embeddingModel ? { embedding: `[${testEmbedding(text).join(',')}]` } : {}),
        })
      }
      await insert(rows)
      if ((at / batch) % 20 === 19) process.stdout.write(`${fmt(at + batch)} `)
    }
  }
  await Promise.all(Array.from({ length: db.parallel }, worker))
  await db.query('vacuum analyze knowledge_documents')
  await db.query('vacuum analyze knowledge_chunks')
  const [size] = await db.query<{ bytes: string }>(`select pg_total_relation_size('knowledge_chunks')::text as bytes`)
  return {
    agentId,
    chunks: count,
    documents,
    embeddingModel,
    seconds: (now() - start) / 1000,
    tableMb: size ? Number(size.bytes) / 1024 / 1024 : null,
    kept,
  }
}

/** A question about one seeded chunk, that chunk being the one relevant answer. */
interface Judged {
  kind: QuestionKind
  query: string
  /** The relevant chunk's text. */
  text: string
}

/** Which seeded chunks the quality questions are about: {@link QUALITY_QUESTIONS} spread evenly over the `count`. */
const qualityIndexes = (count: number) =>
  new Set(Array.from({ length: Math.min(QUALITY_QUESTIONS, count) }, (_, k) => Math.floor(((k + 0.5) * count) / QUALITY_QUESTIONS)))

/** The quality questions: one about each kept chunk, the kinds taking turns (reproducible: a fixed seed). */
function qualityQuestions(kept: Map<number, string>): Judged[] {
  const corpus = new Corpus(4)
  return [...kept.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, text], k) => {
      const kind = QUESTION_KINDS[k % QUESTION_KINDS.length]
      return { kind, query: corpus.questionAbout(text, kind), text }
    })
}

interface Quality {
  questions: number
  /** Questions whose relevant chunk is among the first {@link settings.searchLimit} answered. */
  found: number
  recall: number
  /** Questions whose relevant chunk is answered first. */
  first: number
  byKind: { kind: QuestionKind; questions: number; found: number }[]
  /** The questions whose relevant chunk was not among the answers. */
  missed: string[]
}

/** recall@limit of the search over the quality questions (through the API, as a user searches). */
async function measureQuality(api: Api, agentUuid: string, judged: Judged[]): Promise<Quality> {
  const ranks: (number | null)[] = []
  for (const item of judged) {
    const texts = (
      await call<{ data: { text: string }[] }>(api, 'POST', `/api/v1/agents/${agentUuid}/knowledge/search`, {
        query: item.query,
        limit: settings.searchLimit,
      })
    ).data.map((hit) => hit.text)
    const at = texts.indexOf(item.text)
    ranks.push(at < 0 ? null : at + 1)
  }
  const found = ranks.filter((rank) => rank !== null).length
  return {
    questions: judged.length,
    found,
    recall: judged.length ? found / judged.length : NaN,
    first: ranks.filter((rank) => rank === 1).length,
    byKind: QUESTION_KINDS.map((kind) => ({
      kind,
      questions: judged.filter((item) => item.kind === kind).length,
      found: judged.filter((item, index) => item.kind === kind && ranks[index] !== null).length,
    })),
    missed: judged.filter((_, index) => ranks[index] === null).map((item) => item.query),
  }
}

interface Searched {
  query: string
  ms: number
  hits: number
}

async function searchOnce(api: Api, agentUuid: string, query: string): Promise<Searched> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${agentUuid}/knowledge/search`, {
    method: 'POST',
    headers: headersOf(api),
    body: JSON.stringify({ query, limit: settings.searchLimit }),
  })
  const body = await response.text()
  const ms = now() - start
  if (response.status !== 200) throw new Error(`search: HTTP ${response.status} ${body.slice(0, 300)}`)
  return { query, ms, hits: (JSON.parse(body) as { data: unknown[] }).data.length }
}

interface CannonSummary {
  connections: number
  seconds: number
  requests: number
  requestsPerSecond: number
  p50: number
  p90: number
  p99: number
  non2xx: number
  errors: number
  serviceCpuMsPerRequest: number | null
  postgresCpuMsPerRequest: number | null
  /** CPU of the service and of the PostgreSQL backends over the run, in cores (CPU seconds per second). */
  serviceCores: number | null
  postgresCores: number | null
}

/** autocannon at C connections, each request the next of `queries`: a 1 s warm-up, then the measured run. */
async function searchCannon(
  bench: Bench,
  target: Target,
  api: Api,
  agentUuid: string,
  queries: string[],
  pid: number,
): Promise<CannonSummary> {
  let next = 0
  const run = (seconds: number) =>
    autocannon({
      url: `${api.url}/api/v1/agents/${agentUuid}/knowledge/search`,
      method: 'POST',
      headers: headersOf(api),
      connections: settings.connections,
      pipelining: 1,
      duration: seconds,
      requests: [
        {
          setupRequest: (request) => ({
            ...request,
            body: JSON.stringify({ query: queries[next++ % queries.length], limit: settings.searchLimit }),
          }),
        },
      ],
    })
  await run(1)
  const pids = target.mode === 'postgres' ? await backendPids(bench) : []
  const backends0 = cpuSnapshot(pids)
  const service0 = cpuSeconds(pid)
  const result = await run(settings.durationSeconds)
  const total = result.requests.total
  const service1 = cpuSeconds(pid)
  const postgres = target.mode === 'postgres' ? backendsCpu(backends0, cpuSnapshot(pids)) : null
  return {
    connections: settings.connections,
    seconds: settings.durationSeconds,
    requests: total,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    serviceCpuMsPerRequest: service0 === null || service1 === null || !total ? null : ((service1 - service0) * 1000) / total,
    postgresCpuMsPerRequest: postgres === null || !total ? null : (postgres * 1000) / total,
    serviceCores: service0 === null || service1 === null ? null : (service1 - service0) / settings.durationSeconds,
    postgresCores: postgres === null ? null : postgres / settings.durationSeconds,
  }
}

/**
 * The retrieval statements the service runs for `query` (src/knowledge/retrieval.ts, captured by calling it with an
 * entity manager that runs each on `db` and records it), with `$n` placeholders.
 */
async function retrievalStatements(
  db: Db,
  agentId: number,
  query: string,
  mode: RetrievalMode,
  embedding: { key: string; upstreamUrl: string } | null,
): Promise<{ sql: string; params: unknown[] }[]> {
  const captured: { sql: string; params: unknown[] }[] = []
  const recorder = {
    execute: async (sql: string, params: unknown[] = []) => {
      let n = 0
      const statement = { sql: sql.replace(/\?/g, () => `$${++n}`), params }
      captured.push(statement)
      return db.query(statement.sql, statement.params)
    },
  } as unknown as Em
  const model = embedding
    ? {
        key: embedding.key,
        model: createOpenAI({ apiKey: 'sk-bench-knowledge', baseURL: embedding.upstreamUrl }).embedding('text-embedding-3-small'),
      }
    : null
  await retrieve(recorder, {
    agentId,
    query,
    limit: settings.searchLimit,
    mode,
    embedding: model,
    onEmbeddingError: (error) => console.warn('query not embedded:', error),
  })
  if (!captured.length) throw new Error('retrieve ran no statement')
  return captured
}

/** The number of the agent's chunks holding any English lexeme of `query` (the OR of them): how common its words are. */
const MATCHES_SQL = `select count(*)::int as n from knowledge_chunks c
  where c.agent_id = $2 and c.tsv @@ to_tsquery('simple', coalesce((select string_agg('''' || replace(lexeme, '''', '''''') || '''', ' | ')
    from unnest(to_tsvector('english', $1::text))), ''))`

interface Explained {
  query: string
  matches: number
  /** Summed over the statements. */
  executionMs: number
  planningMs: number
  statements: number
  /** The plans' lines naming an index or a scan, and their totals. */
  summary: string[]
  plan: string
}

async function explainQueries(
  db: Db,
  agentId: number,
  queries: string[],
  mode: RetrievalMode,
  embedding: { key: string; upstreamUrl: string } | null,
): Promise<Explained[]> {
  const explained: Explained[] = []
  for (const query of queries) {
    const statements = await retrievalStatements(db, agentId, query, mode, embedding)
    const plans: string[] = []
    for (const statement of statements) {
      const rows = await db.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.sql}`, statement.params)
      plans.push(rows.map((row) => row['QUERY PLAN']).join('\n'))
    }
    const plan = plans.join('\n\n')
    const [{ n }] = await db.query<{ n: number }>(MATCHES_SQL, [query, agentId])
    const sum = (pattern: RegExp) => plans.reduce((total, one) => total + Number(pattern.exec(one)?.[1] ?? NaN), 0)
    explained.push({
      query,
      matches: Number(n),
      executionMs: sum(/Execution Time: ([\d.]+) ms/),
      planningMs: sum(/Planning Time: ([\d.]+) ms/),
      statements: statements.length,
      summary: plan
        .split('\n')
        .filter((line) => /Scan|Index|Sort|WindowAgg|Limit|Execution Time|Planning Time|Buffers: shared/.test(line))
        .map((line) => line.replace(/\s+$/, '')),
      plan,
    })
  }
  return explained
}

/** Search latency by how many chunks hold any word of the question. */
interface Bucket {
  label: string
  questions: number
  matchesP50: number
  latency: Summary
}

async function bucketsOf(db: Db, agentId: number, searched: Searched[], total: number): Promise<Bucket[]> {
  const sample = searched.filter((_, index) => index % Math.max(1, Math.floor(searched.length / 100)) === 0)
  const counted: { matches: number; ms: number }[] = []
  for (const item of sample) {
    const [{ n }] = await db.query<{ n: number }>(MATCHES_SQL, [item.query, agentId])
    counted.push({ matches: Number(n), ms: item.ms })
  }
  const edges = [0, 0.01, 0.05, 0.2, 0.5, 1.01].map((share) => share * total)
  const buckets: Bucket[] = []
  for (let i = 0; i < edges.length - 1; i++) {
    const inside = counted.filter((item) => item.matches >= edges[i] && item.matches < edges[i + 1])
    if (!inside.length) continue
    buckets.push({
      label: `${fmt((edges[i] / total) * 100)}-${fmt(Math.min(100, (edges[i + 1] / total) * 100))}% of the chunks`,
      questions: inside.length,
      matchesP50: summarise(inside.map((item) => item.matches)).p50,
      latency: summarise(inside.map((item) => item.ms)),
    })
  }
  return buckets
}

// ---------------------------------------------------------------------------------------------
// (3) Runs with and without knowledge

interface Ran {
  ms: number
  citations: number
}

async function runOnce(api: Api, agentUuid: string, input: string): Promise<Ran> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${agentUuid}/run`, {
    method: 'POST',
    headers: headersOf(api),
    body: JSON.stringify({ input }),
  })
  const text = await response.text()
  const ms = now() - start
  if (response.status !== 200) throw new Error(`run: HTTP ${response.status} ${text.slice(0, 300)}`)
  const { data } = JSON.parse(text) as {
    data: { run: { status: string; output: string }; messages: { role: string; citations?: unknown[] }[] }
  }
  if (data.run.status !== 'succeeded' || data.run.output !== `Echo: ${input}`)
    throw new Error(`run: ${data.run.status} ${JSON.stringify(data.run.output)}`)
  return { ms, citations: data.messages.find((message) => message.role === 'assistant')?.citations?.length ?? 0 }
}

interface RunComparison {
  agent: string
  chunks: number
  on: Summary
  off: Summary
  /** Mean citations of the runs with knowledge (should be the search limit of a run, 5). */
  citationsOn: number
  citationsOff: number
  addedP50: number
  serviceCpuMsOn: number | null
  serviceCpuMsOff: number | null
}

const setKnowledge = (api: Api, agentUuid: string, on: boolean) =>
  call(api, 'PUT', `/api/v1/agents/${agentUuid}`, { metadata: { knowledge: on } })

/** Runs of the agent with knowledge on and off, in four alternating blocks (on, off, on, off). */
async function compareRuns(
  api: Api,
  agentUuid: string,
  label: string,
  chunks: number,
  questions: string[],
  pid: number,
): Promise<RunComparison> {
  let asked = 0
  const ask = () => questions[asked++ % questions.length]
  const sides = { on: [] as Ran[], off: [] as Ran[] }
  const cpu = { on: 0, off: 0 }
  for (const on of [true, false]) {
    await setKnowledge(api, agentUuid, on)
    await sequential(settings.runWarmup, () => runOnce(api, agentUuid, ask()))
  }
  const block = Math.ceil(settings.runs / 2)
  for (const on of [true, false, true, false]) {
    await setKnowledge(api, agentUuid, on)
    const cpu0 = cpuSeconds(pid)
    sides[on ? 'on' : 'off'].push(...(await sequential(block, () => runOnce(api, agentUuid, ask()))))
    const cpu1 = cpuSeconds(pid)
    if (cpu0 !== null && cpu1 !== null) cpu[on ? 'on' : 'off'] += cpu1 - cpu0
  }
  await setKnowledge(api, agentUuid, true)
  const on = summarise(sides.on.map((ran) => ran.ms))
  const off = summarise(sides.off.map((ran) => ran.ms))
  const mean = (rans: Ran[]) => rans.reduce((sum, ran) => sum + ran.citations, 0) / (rans.length || 1)
  const readable = cpuSeconds(pid) !== null
  return {
    agent: label,
    chunks,
    on,
    off,
    citationsOn: mean(sides.on),
    citationsOff: mean(sides.off),
    addedP50: on.p50 - off.p50,
    serviceCpuMsOn: readable ? (cpu.on * 1000) / sides.on.length : null,
    serviceCpuMsOff: readable ? (cpu.off * 1000) / sides.off.length : null,
  }
}

/** The retrieval mode a run used, from its `knowledge.retrieved` event. */
async function runMode(api: Api, agentUuid: string): Promise<string> {
  const response = await call<{ data: { run: { uuid: string } } }>(api, 'POST', `/api/v1/agents/${agentUuid}/run`, {
    input: 'Where can I find the handbook?',
  })
  const { events } = await readSse(`${api.url}/api/v1/runs/${response.data.run.uuid}/events`, { authorization: `Bearer ${api.token}` })
  const retrieved = events.find((event) => event.event === 'knowledge.retrieved')
  return retrieved ? String((JSON.parse(retrieved.data) as { data: { mode: string } }).data.mode) : 'none (no knowledge.retrieved event)'
}

// ---------------------------------------------------------------------------------------------
// One mode

interface ModeResult {
  mode: Mode
  retrieval: string
  startupSeconds: number
  ingest: IngestResult
  seeded: Seeded
  search: {
    sequential: Summary
    quality: Quality
    emptyAnswers: number
    serviceCpuMs: number | null
    postgresCpuMs: number | null
    otherLoadCores: number | null
    cannon: CannonSummary
    buckets: Bucket[]
    /** Sequential searches on the agent trained in (1). */
    onTrained: Summary
  }
  explained: Explained[]
  runs: RunComparison[]
}

async function measureMode(bench: Bench, mode: Mode, upstream: Child): Promise<ModeResult> {
  console.log(`\n== ${mode} ==`)
  const dataDir = mode === 'pglite' ? mkdtempSync(path.join(os.tmpdir(), 'aw-bench-knowledge-')) : null
  if (dataDir) bench.closers.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  const target: Target = {
    mode,
    dataDir,
    env: {
      ...CHILD_ENV,
      ...(dataDir ? { DATABASE_URL: '', DATA_DIR: dataDir } : { DATABASE_URL: bench.databaseUrl, DATA_DIR: '' }),
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      WORKER: 'true',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
      OPENAI_API_KEY: 'sk-bench-knowledge',
      OPENAI_BASE_URL: upstream.url,
    },
  }
  const chunks = mode === 'pglite' ? settings.pgliteChunks : settings.chunks
  const startup = now()
  let service = await startKnowledgeService(bench, target)
  const startupSeconds = (now() - startup) / 1000
  const email = `bench-knowledge-${randomBytes(4).toString('hex')}@example.com`
  const { token } = await signUp(service.url, 'Bench Trainer', email)
  let api: Api = { url: service.url, token }
  const trained = await createAgent(api, 'Bench trained')
  const seededAgent = await createAgent(api, 'Bench seeded')

  process.stdout.write(`(1) ingest ${fmt(settings.documents)} documents of ${fmt(settings.documentBytes)} bytes ... `)
  const ingested = await ingest(bench, target, api, trained, service.process.pid!)
  console.log(
    `${fmt(ingested.ready)} ready, ${ingested.failed} failed in ${fmt(ingested.seconds, 1)} s: ${fmt(ingested.documentsPerSecond, 1)} documents/s, ` +
      `${fmt(ingested.chunks)} chunks, peak RSS ${mb(ingested.memory.vmHwm ?? ingested.memory.peakRssSampled)} MB`,
  )
  const retrieval = await runMode(api, trained)
  console.log(`retrieval mode: ${retrieval}`)

  process.stdout.write(`(2) seed ${fmt(chunks)} chunks ... `)
  if (mode === 'pglite') await stopService(bench, service)
  let db = await openDb(bench, target)
  let seeded: Seeded
  try {
    seeded = await seedChunks(db, seededAgent, chunks, qualityIndexes(chunks))
  } finally {
    if (mode === 'pglite') await db.close()
  }
  console.log(
    `${fmt(seeded.seconds, 1)} s, knowledge_chunks ${fmt(seeded.tableMb ?? NaN)} MB${seeded.embeddingModel ? `, embeddings ${seeded.embeddingModel}` : ', no embeddings'}`,
  )
  if (mode === 'pglite') {
    service = await startKnowledgeService(bench, target)
    api = { url: service.url, token }
  }
  const pid = service.process.pid!

  const questions = new Corpus(3)
  const queries = Array.from({ length: Math.max(settings.searches, 200) }, () => questions.question())
  process.stdout.write(`search: warm-up ${settings.warmup}, ${settings.searches} sequential (at most ${settings.searchSeconds} s) ... `)
  await sequential(settings.warmup, (index) => searchOnce(api, seededAgent, queries[(index * 7) % queries.length]))
  const pids = mode === 'postgres' ? await backendPids(bench) : []
  const backends0 = cpuSnapshot(pids)
  const service0 = cpuSeconds(pid)
  const machine0 = machineBusySeconds()
  const self0 = process.cpuUsage()
  const searchStart = now()
  const searched = await sequentialFor(settings.searches, settings.searchSeconds, (index) =>
    searchOnce(api, seededAgent, queries[index % queries.length]),
  )
  const searchWall = (now() - searchStart) / 1000
  const serviceCpuMs = cpuMsPer(pid, service0, searched.length)
  const postgresCpu = mode === 'postgres' ? backendsCpu(backends0, cpuSnapshot(pids)) : null
  const postgresCpuMs = postgresCpu === null ? null : (postgresCpu * 1000) / searched.length
  const machine1 = machineBusySeconds()
  const self = process.cpuUsage(self0)
  // Cores kept busy by everything else on the machine meanwhile (other processes: the machine is shared).
  const otherLoadCores =
    machine0 === null || machine1 === null || serviceCpuMs === null
      ? null
      : Math.max(
          0,
          (machine1 - machine0 - (serviceCpuMs * searched.length) / 1000 - (postgresCpu ?? 0) - (self.user + self.system) / 1e6) /
            searchWall,
        )
  const sequentialSummary = summarise(searched.map((item) => item.ms))
  const quality = await measureQuality(api, seededAgent, qualityQuestions(seeded.kept))
  process.stdout.write(
    `p50 ${fmt(sequentialSummary.p50, 2)} ms, p99 ${fmt(sequentialSummary.p99, 2)} ms; recall@${settings.searchLimit} ${quality.found}/${quality.questions}; autocannon ${settings.connections} connections ${settings.durationSeconds} s ... `,
  )
  const cannon = await searchCannon(bench, target, api, seededAgent, queries, pid)
  console.log(`${fmt(cannon.requestsPerSecond, 1)} searches/s, p50 ${fmt(cannon.p50)} ms`)
  const onTrained = summarise(
    (
      await sequential(Math.min(settings.searches, 100) + settings.warmup, (index) =>
        searchOnce(api, trained, queries[index % queries.length]),
      )
    )
      .slice(settings.warmup)
      .map((item) => item.ms),
  )

  process.stdout.write(`(3) runs with knowledge on/off: ${settings.runs} of each per agent ... `)
  const runs = [
    await compareRuns(api, trained, `trained through the API (${fmt(settings.documents)} documents)`, ingested.chunks, queries, pid),
    await compareRuns(api, seededAgent, `seeded (${fmt(chunks)} chunks)`, chunks, queries, pid),
  ]
  console.log(runs.map((run) => `added p50 ${fmt(run.addedP50, 2)} ms (${run.agent})`).join('; '))

  process.stdout.write(`EXPLAIN (ANALYZE, BUFFERS) of ${settings.explain} questions, matches of a sample ... `)
  if (mode === 'pglite') {
    await stopService(bench, service)
    db = await openDb(bench, target)
  }
  try {
    const hybrid = retrieval === 'hybrid' && seeded.embeddingModel ? { key: seeded.embeddingModel, upstreamUrl: upstream.url } : null
    const explained = await explainQueries(db, seeded.agentId, queries.slice(0, settings.explain), hybrid ? 'hybrid' : 'full-text', hybrid)
    const buckets = await bucketsOf(db, seeded.agentId, searched, chunks)
    console.log(`execution ${explained.map((item) => fmt(item.executionMs, 1)).join(', ')} ms`)
    return {
      mode,
      retrieval,
      startupSeconds,
      ingest: ingested,
      seeded,
      search: {
        sequential: sequentialSummary,
        quality,
        emptyAnswers: searched.filter((item) => item.hits === 0).length,
        serviceCpuMs,
        postgresCpuMs,
        otherLoadCores,
        cannon,
        buckets,
        onTrained,
      },
      explained,
      runs,
    }
  } finally {
    await db.close()
    if (bench.children.includes(service)) await stopService(bench, service)
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value: number | null | undefined, digits = 2) =>
  value === null || value === undefined || Number.isNaN(value) ? 'n/a' : fmt(value, digits)
const mb = (bytes: number | null | undefined) =>
  bytes === null || bytes === undefined || Number.isNaN(bytes) ? 'n/a' : fmt(bytes / 1024 / 1024, 1)
const verdict = (pass: boolean) => (pass ? '**met**' : '**not met**')
/** Ready documents at `seconds` into the ingestion (the last poll before), `-` past its end. */
const readyAt = (timeline: { seconds: number; ready: number }[], seconds: number) =>
  timeline.length && timeline.at(-1)!.seconds >= seconds
    ? fmt(timeline.filter((point) => point.seconds <= seconds).at(-1)?.ready ?? 0)
    : '-'

function targetsOf(result: ModeResult) {
  return {
    search: result.seeded.chunks >= SEARCH_TARGET_CHUNKS ? result.search.sequential.p50 <= SEARCH_TARGET_MS : null,
    searchP99: result.seeded.chunks >= SEARCH_TARGET_CHUNKS ? result.search.sequential.p99 <= SEARCH_P99_TARGET_MS : null,
    run: result.runs.every((run) => run.addedP50 <= RUN_ADDED_TARGET_MS),
  }
}

function modeMarkdown(result: ModeResult): string[] {
  const i = result.ingest
  const s = result.search
  const c = s.cannon
  const t = targetsOf(result)
  const row = (name: string, summary: Summary, extra = '') =>
    `| ${name} | ${fmt(summary.n)} | ${ms(summary.p50)} | ${ms(summary.p90)} | ${ms(summary.p99)} | ${extra} |`
  const lines = [
    `### ${result.mode === 'postgres' ? 'PostgreSQL' : 'PGlite (embedded)'}: retrieval ${result.retrieval}`,
    '',
    `(1) Ingestion of ${fmt(i.documents)} text documents of ${fmt(settings.documentBytes)} bytes, ${settings.sourcesPerTrain} per train request: ` +
      `${fmt(i.ready)} ready, ${i.failed} failed${i.failedSample ? ` (first: ${i.failedSample})` : ''}` +
      `${i.finished ? '' : `; **not finished within ${settings.ingestTimeoutSeconds} s**: ${fmt(i.discarded)} still queued or processing, then deleted`}; ${fmt(i.chunks)} chunks, ${fmt(i.tokens)} tokens.`,
    '',
    '| measurement | result |',
    '| --- | ---: |',
    `| ${i.finished ? 'end to end (first train request to last document ready)' : 'window (first train request to the timeout)'} | ${fmt(i.seconds, 1)} s |`,
    `| documents ready per second over it | ${fmt(i.documentsPerSecond, 2)} |`,
    `| train requests answered (202), all ${fmt(Math.ceil(i.documents / settings.sourcesPerTrain))}; documents ready by then | ${fmt(i.trainSeconds, 1)} s; ${fmt(i.readyAtTrainEnd)} |`,
    `| documents ready at ${[10, 30, 60, 120, 300].map((at) => `${at}`).join(' / ')} s | ${[10, 30, 60, 120, 300].map((at) => readyAt(i.timeline, at)).join(' / ')} |`,
    `| train request p50 / p99 | ${ms(i.train.p50)} / ${ms(i.train.p99)} ms |`,
    ...(i.jobs
      ? [
          `| ingestion jobs started (pg-boss) / active time p50 / p99 | ${fmt(i.jobs.count)} / ${ms(i.jobs.active.p50)} / ${ms(i.jobs.active.p99)} ms |`,
          `| gap between job starts p50 / p90 / longest | ${ms(i.jobs.startGaps.p50)} / ${ms(i.jobs.startGaps.p90)} / ${ms(i.jobs.longestIdleSeconds * 1000)} ms |`,
        ]
      : []),
    `| service CPU per ready document (whole window) | ${ms(i.serviceCpuMsPerDocument)} ms |`,
    `| PostgreSQL backends' CPU per ready document (whole window) | ${ms(i.postgresCpuMsPerDocument)} ms |`,
    `| service RSS: before / peak (sampled every 50 ms) / VmHWM / after | ${mb(i.memory.baselineRss)} / ${mb(i.memory.peakRssSampled)} / ${i.memory.peakResetWorked ? mb(i.memory.vmHwm) : 'n/a'} / ${mb(i.memory.afterRss)} MB |`,
    '',
    `(2) Search at ${fmt(result.seeded.chunks)} chunks (${fmt(result.seeded.documents)} documents seeded with SQL in ${fmt(result.seeded.seconds, 1)} s, ` +
      `knowledge_chunks ${fmt(result.seeded.tableMb ?? NaN)} MB with its indexes${result.seeded.embeddingModel ? `, embeddings of ${result.seeded.embeddingModel}` : ''}); limit ${settings.searchLimit}:`,
    '',
    '| row | n | p50 ms | p90 ms | p99 ms | notes |',
    '| --- | ---: | ---: | ---: | ---: | --- |',
    row(
      '`POST agents/{x}/knowledge/search`, sequential',
      s.sequential,
      `service CPU ${ms(s.serviceCpuMs)} ms/search${s.postgresCpuMs === null ? '' : `, PostgreSQL ${ms(s.postgresCpuMs)} ms/search`}; ${s.emptyAnswers} empty answers; ` +
        `other processes kept ${ms(s.otherLoadCores)} cores busy`,
    ),
    `| autocannon ${c.connections} connections, ${c.seconds} s | ${fmt(c.requests)} | ${ms(c.p50, 0)} | ${ms(c.p90, 0)} | ${ms(c.p99, 0)} | ${fmt(c.requestsPerSecond, 1)} searches/s${c.non2xx || c.errors ? `, ${c.non2xx} non-2xx, ${c.errors} errors` : ''}; ` +
      `CPU/search: service ${ms(c.serviceCpuMsPerRequest)} ms${c.postgresCpuMsPerRequest === null ? '' : `, PostgreSQL ${ms(c.postgresCpuMsPerRequest)} ms`} ` +
      `(searches still in flight at the end make these high when latency is long); cores busy: service ${ms(c.serviceCores)}${c.postgresCores === null ? '' : `, PostgreSQL ${ms(c.postgresCores)}`} |`,
    row(`the same on the agent trained in (1), ${fmt(i.chunks)} chunks, sequential`, s.onTrained),
    '',
    `Quality: ${s.quality.questions} questions about one seeded chunk each (bench/knowledge-corpus.ts, \`questionAbout\`): ` +
      `recall@${settings.searchLimit} **${s.quality.found}/${s.quality.questions}** (${fmt(s.quality.recall * 100)}%), answered first ${s.quality.first}; ` +
      `by kind ${s.quality.byKind.map((k) => `${k.kind} ${k.found}/${k.questions}`).join(', ')}.`,
    '',
    'Sequential search latency by the share of the chunks holding any word of the question (a sample of the questions):',
    '',
    '| chunks holding a word | questions | such chunks p50 | p50 ms | p90 ms |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...s.buckets.map((b) => `| ${b.label} | ${b.questions} | ${fmt(b.matchesP50)} | ${ms(b.latency.p50)} | ${ms(b.latency.p90)} |`),
    '',
    'EXPLAIN (ANALYZE, BUFFERS) of the retrieval statements (each run once just before, so warm; times summed over them):',
    '',
    '| question | chunks holding any of its words | statements | planning ms | execution ms |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...result.explained.map((e) => `| ${e.query} | ${fmt(e.matches)} | ${e.statements} | ${ms(e.planningMs)} | ${ms(e.executionMs)} |`),
    '',
  ]
  const median = [...result.explained].sort((a, b) => a.executionMs - b.executionMs)[Math.floor(result.explained.length / 2)]
  if (median) lines.push(`Plan of the median one ("${median.query}"):`, '', '```', median.plan, '```', '')
  lines.push(
    '(3) `POST agents/{x}/run` answered when done, the same agent with `metadata.knowledge` true and false (alternating blocks):',
    '',
    '| agent | chunks | knowledge | n | p50 ms | p90 ms | p99 ms | citations/run | service CPU ms/run |',
    '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...result.runs.flatMap((run) => [
      `| ${run.agent} | ${fmt(run.chunks)} | true | ${run.on.n} | ${ms(run.on.p50)} | ${ms(run.on.p90)} | ${ms(run.on.p99)} | ${fmt(run.citationsOn, 1)} | ${ms(run.serviceCpuMsOn)} |`,
      `| | | false | ${run.off.n} | ${ms(run.off.p50)} | ${ms(run.off.p90)} | ${ms(run.off.p99)} | ${fmt(run.citationsOff, 1)} | ${ms(run.serviceCpuMsOff)} |`,
      `| | | added at p50 | | **${ms(run.addedP50)}** | | | | |`,
    ]),
    '',
    `Targets: search p50 ≤ ${SEARCH_TARGET_MS} ms at ${fmt(SEARCH_TARGET_CHUNKS)} chunks ${t.search === null ? `n/a (${fmt(result.seeded.chunks)} chunks seeded)` : verdict(t.search)} (${ms(s.sequential.p50)} ms); ` +
      `p99 ≤ ${SEARCH_P99_TARGET_MS} ms ${t.searchP99 === null ? 'n/a' : verdict(t.searchP99)} (${ms(s.sequential.p99)} ms); ` +
      `retrieval adds ≤ ${RUN_ADDED_TARGET_MS} ms to a run at p50 ${verdict(t.run)} (${result.runs.map((run) => `${ms(run.addedP50)} ms at ${fmt(run.chunks)} chunks`).join(', ')}).`,
    '',
  )
  return lines
}

// ---------------------------------------------------------------------------------------------

async function main(bench: Bench) {
  const loadBefore = os.loadavg()
  const started = now()
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  console.log(`upstream ${upstream.url}`)
  const results: ModeResult[] = []
  for (const mode of settings.modes) results.push(await measureMode(bench, mode, upstream))

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md = [
    `Knowledge benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}; load average ${loadBefore.map((load) => load.toFixed(2)).join(', ')} before, ` +
      `${machine.json.loadAverage.map((load) => load.toFixed(2)).join(', ')} after; ${fmt((now() - started) / 1000)} s in all.`,
    `Upstream: test/helpers/upstream.ts in its own process (chat answered \`Echo: <input>\` at once; embeddings of 64 dimensions). ` +
      `Searches: up to ${settings.searches} sequential (at most ${settings.searchSeconds} s) after ${settings.warmup} warm-up; autocannon ${settings.connections} connections, ${settings.durationSeconds} s after a 1 s warm-up. ` +
      `Runs: ${settings.runs} of each side per agent after ${settings.runWarmup} warm-up runs of each.`,
    '',
    ...results.flatMap(modeMarkdown),
    'Summary (search at the seeded chunks, sequential):',
    '',
    ...results.map(
      (r) =>
        `- ${r.mode} (${r.retrieval}), ${fmt(r.seeded.chunks)} chunks: p50 ${ms(r.search.sequential.p50)} ms, p99 ${ms(r.search.sequential.p99)} ms, ` +
        `recall@${settings.searchLimit} ${r.search.quality.found}/${r.search.quality.questions}`,
    ),
    '',
  ].join('\n')
  console.log(`\n${md}`)
  const json = {
    date,
    machine: machine.json,
    loadAverageBefore: loadBefore,
    settings,
    targets: Object.fromEntries(
      results.map((result) => [
        result.mode,
        { searchTargetMs: SEARCH_TARGET_MS, searchP99TargetMs: SEARCH_P99_TARGET_MS, runAddedTargetMs: RUN_ADDED_TARGET_MS, ...targetsOf(result) },
      ]),
    ),
    results,
  }
  writeResults(['knowledge-latest'], json, md + '\n')
}

await runBench('aw_bench_knowledge', main)
