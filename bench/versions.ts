/**
 * `npm run bench:versions`: what agent versions (docs/api/versions.md) cost: the space their
 * snapshots take, a run pinned to a version against one of the current agent, and a `PUT` that
 * records a version against one that records none. The model is the local OpenAI-compatible
 * upstream of the tests (test/helpers/upstream.ts, in its own process through
 * bench/runs-upstream.ts, answering `Echo: <input>` at once); the service runs as a child process,
 * all over 127.0.0.1. Three phases:
 *
 *   (1) storage  P sequential `PUT /api/v1/agents/{uuid}` (default 1,000) of an agent whose
 *                instruction is B bytes (default 20 KB) of English-like text (generated from a
 *                fixed seed, so every run stores the same text), each changing the instruction: a
 *                sentence with the PUT's number inserted after its first section. Then P more of
 *                a second such agent, each changing only `description` while the instruction
 *                stays. After each variant, `pg_total_relation_size('agent_versions')` (heap,
 *                TOAST and indexes) and what the variant added to it; the snapshots' stored
 *                (compressed) and JSON sizes; what the variant added to `outbox_events`, whose
 *                `agent.version_created` event carries the snapshot too. Target: at most 25 MB
 *                for 1,000 versions.
 *   (2) pinned   `POST /api/v1/agents/{uuid}/run` answered when done, with `version` against
 *                without, interleaved run by run (the order rotating each round) on two agents:
 *                the first agent of (1) (B bytes of instruction, P + 1 versions; a version from
 *                the middle pinned) and one with a short instruction and 2 versions (version 1
 *                pinned). N runs of each after W of warm-up; each answer checked (`Echo: <input>`,
 *                the run's `agent_version`). p50, p95 and p99 of each; added at p50 (pinned p50 −
 *                current p50) and the median of the rounds' differences. Target: at most +1 ms at
 *                p50.
 *   (3) put      `PUT /api/v1/agents/{uuid}` on two fresh agents (B bytes of instruction, and a
 *                short one), interleaved: the instruction changed (a version made), only
 *                `visibility` toggled (none), and on the long agent its unchanged instruction
 *                sent with the toggle (none, the same body as the first); each answer's `version`
 *                checked. N of each after W of warm-up: p50 and p95, against the visibility-only
 *                PUT of the same agent. On PostgreSQL a second service whose connections go
 *                through a counting proxy (bench/runs-probes.ts) reports each kind's statements,
 *                and the server's time for them, and the same for the runs of (2).
 *
 * On PostgreSQL (a fresh database `aw_bench_versions_*` on BENCH_DATABASE_URL, dropped at the end)
 * and on PGlite (embedded, a temporary DATA_DIR: its database is the service's own file, so the
 * service is stopped while this process reads the sizes, and started again).
 *
 * The exit code is 0 whether or not a target is met (a measurement, not a test), 1 on an error.
 * Results: bench/results/versions-latest.{json,md}.
 *
 * Environment (defaults keep the whole benchmark under about 5 minutes on 2 cores):
 *   BENCH_DATABASE_URL        admin connection of the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_VERSIONS_MODES      "postgres,pglite" (default both)
 *   BENCH_VERSIONS_PHASES     "storage,pinned,put" (default all; without storage, (2) makes 10 versions of its agent first)
 *   BENCH_VERSIONS_PUTS       P, versions made by each variant of (1) (default 1,000)
 *   BENCH_VERSIONS_BYTES      B, bytes of the long instruction (default 20,480)
 *   BENCH_VERSIONS_RUNS       N, measured runs of each kind of (2) and PUTs of each kind of (3) (default 300)
 *   BENCH_VERSIONS_WARMUP     W, warm-up rounds of (2) and (3) (default 30)
 *   BENCH_VERSIONS_PROFILE    runs and PUTs of each kind counted through the SQL proxy, 0 to skip (default 40)
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { gzipSync } from 'node:zlib'
import { PGlite } from '@electric-sql/pglite'
import { vector } from '@electric-sql/pglite-pgvector'
import pg from 'pg'
import { cpuSeconds } from './cpu.ts'
import { type Bench, CHILD_ENV, envList, expectOk, fmt, machineOf, runBench, signUp, writeResults } from './harness.ts'
import { type Child, startChild, startUpstreamChild, stopChild } from './processes.ts'
import { SqlCounter, type SqlCounts, type TimelineEntry } from './runs-probes.ts'

/** A whole number >= 0 from the environment, else `fallback`. */
function envCount(name: string, fallback: number): number {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number >= 0`)
  return value
}

type Mode = 'postgres' | 'pglite'
const settings = {
  modes: [...envList('BENCH_VERSIONS_MODES', 'postgres,pglite')].filter(Boolean) as Mode[],
  phases: envList('BENCH_VERSIONS_PHASES', 'storage,pinned,put'),
  puts: Math.max(1, envCount('BENCH_VERSIONS_PUTS', 1_000)),
  bytes: Math.max(1_000, envCount('BENCH_VERSIONS_BYTES', 20_480)),
  runs: Math.max(1, envCount('BENCH_VERSIONS_RUNS', 300)),
  warmup: envCount('BENCH_VERSIONS_WARMUP', 30),
  profileRuns: envCount('BENCH_VERSIONS_PROFILE', 40),
}
for (const mode of settings.modes)
  if (mode !== 'postgres' && mode !== 'pglite') throw new Error(`BENCH_VERSIONS_MODES: unknown mode ${mode}`)
for (const phase of settings.phases)
  if (!['storage', 'pinned', 'put'].includes(phase)) throw new Error(`BENCH_VERSIONS_PHASES: unknown phase ${phase}`)

/** Targets: `agent_versions` for 1,000 versions (MB), and what pinning a version may add to a run at p50 (ms). */
const STORAGE_TARGET_MB = 25
const STORAGE_TARGET_VERSIONS = 1_000
const PINNED_TARGET_MS = 1
const INPUT = 'What is the weather like in Lisbon today?'
const SHORT = 'Answer briefly.'
const MB = 1024 * 1024

const now = () => performance.now()

// ---------------------------------------------------------------------------------------------
// The instruction: English-like text from a fixed seed

/** mulberry32: a small seeded generator, so that every run writes the same text. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Function words, most frequent first (drawn with a 1/rank law, as in English). */
const FUNCTION_WORDS =
  'the|of|and|to|a|in|is|that|for|it|as|with|be|on|not|this|by|are|or|at|from|but|an|they|which|you|one|all|their|has|will|if|can|' +
  'when|there|so|no|what|about|more|may|its|into|than|them|only|other|any|some|should|each|then|these|before|after|because|while|' +
  'where|who|must|also|does|such|every|both|until'
/** Content words of a shop's support assistant, drawn evenly. */
const CONTENT_WORDS =
  'order|customer|answer|question|refund|delivery|invoice|account|product|price|payment|address|policy|return|warranty|contract|' +
  'message|reply|ticket|request|issue|error|date|time|week|month|year|day|hour|minute|team|manager|colleague|partner|vendor|supplier|' +
  'store|shop|warehouse|parcel|package|box|item|size|colour|model|version|update|release|note|report|summary|detail|example|reason|' +
  'problem|solution|step|guide|manual|page|link|file|document|photo|image|screen|button|form|field|name|email|phone|number|code|' +
  'discount|coupon|offer|sale|stock|shipment|carrier|tracking|label|fee|cost|tax|total|balance|credit|card|bank|transfer|plan|' +
  'subscription|trial|renewal|cancellation|upgrade|downgrade|feature|setting|option|preference|language|region|country|city|currency|' +
  'law|rule|limit|exception|approval|review|complaint|feedback|rating|survey|apology|thanks|greeting|signature|tone|style|format|list|' +
  'table|heading|paragraph|sentence|word|term|phrase|topic|subject|category|tag|status|priority|deadline|schedule|meeting|call|chat|' +
  'conversation|history|record|log|source|reference|fact|figure|estimate|measure|amount|quantity|weight|length|distance|speed|quality|' +
  'safety|privacy|security|password|login|access|permission|role|owner|user|member|guest|visitor|reader|writer|author|editor|reviewer|' +
  'agent|assistant|human|person|people|child|parent|family|friend|company|business|office|department|service|support|help|advice|' +
  'instruction|direction|decision|choice|mistake|risk|chance|benefit|value|goal|task|job|work|project|process|method|system|tool|' +
  'device|machine|app|website|platform|network|server|database|backup|copy|draft|template|sample|test|check|audit|claim|case|incident|' +
  'outage|delay|damage|defect|repair|replacement|exchange|voucher|gift|wallet|checkout|basket|cart|receipt|bill|statement|quote|' +
  'proposal|agreement|condition|notice|warning|reminder|alert|notification|confirmation|verification|identity|license|certificate|' +
  'permit|season|holiday|weekend|morning|evening|night|today|tomorrow|yesterday|ask|tell|say|write|read|send|receive|confirm|explain|' +
  'describe|mention|suggest|recommend|provide|include|exclude|avoid|keep|make|take|give|find|use|follow|repeat|change|cancel|approve|' +
  'reject|accept|decline|replace|ship|deliver|track|pay|charge|open|close|start|finish|wait|forward|escalate|resolve|fix|handle|' +
  'manage|compare|count|sort|group|split|join|attach|upload|download|save|delete|remove|add|create|build|prepare|book|reserve|remind|' +
  'notify|warn|thank|apologise|greet|welcome|clear|short|long|simple|complex|polite|friendly|formal|casual|direct|honest|careful|calm|' +
  'patient|quick|slow|early|late|new|old|recent|current|previous|next|last|first|second|final|full|partial|empty|closed|free|paid|' +
  'cheap|expensive|large|small|heavy|light|local|foreign|public|private|personal|official|legal|safe|secure|wrong|right|correct|exact|' +
  'precise|accurate|complete|missing|broken|damaged|available|unavailable|possible|impossible|likely|unlikely|important|urgent|normal|' +
  'special|usual|rare|common|specific|general|relevant|useful|helpful|clearly|briefly|politely|carefully|quickly|always|never|often|' +
  'sometimes|usually|rarely|again|already|still|just|even|almost|nearly|exactly|perhaps|probably|certainly|instead|otherwise|however|' +
  'therefore|meanwhile|finally|later|soon|now|here|together|alone|online|offline|inside|outside|above|below|within|without|during|' +
  'against|between|among|across|through|over|under'
const functionWords = FUNCTION_WORDS.split('|')
const contentWords = CONTENT_WORDS.split('|')

/**
 * A sentence of 6 to 19 words, half of them function words drawn with a 1/rank law, the rest
 * content words; now and then a number or a comma. Its statistics, not its sense, are English's:
 * PostgreSQL's compression (pglz) keeps 53% of 20 KB of it, and gzip 40%, against 47-51% and
 * 35-38% for 20 KB of real English prose (this repository's docs, the GPL) on the same server.
 */
function sentence(random: () => number): string {
  const count = 6 + Math.floor(random() * 14)
  const words: string[] = []
  for (let index = 0; index < count; index++)
    words.push(
      random() < 0.5
        ? functionWords[Math.min(functionWords.length - 1, Math.floor(Math.pow(functionWords.length + 1, random())) - 1)]
        : contentWords[Math.floor(random() * contentWords.length)],
    )
  if (random() < 0.2) words.splice(1 + Math.floor(random() * (count - 1)), 0, String(1 + Math.floor(random() * 90)))
  let text = words.join(' ')
  if (random() < 0.3) {
    const space = text.indexOf(' ', Math.floor(text.length / 2))
    if (space > 0) text = `${text.slice(0, space)},${text.slice(space)}`
  }
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`
}

/** At least `bytes` of an agent's instruction: numbered sections of rules (ASCII, so characters are bytes). */
function baseInstruction(bytes: number): string {
  const random = seeded(20261128)
  let text = 'You are the support assistant of a mid-sized online shop. Follow these instructions in every answer.\n'
  for (let section = 1; text.length < bytes + 1_000; section++) {
    const topic = contentWords[Math.floor(random() * contentWords.length)]
    text += `\n## ${section}. ${topic.charAt(0).toUpperCase()}${topic.slice(1)}\n`
    for (let rule = 0, rules = 3 + Math.floor(random() * 5); rule < rules; rule++)
      text += `- ${Array.from({ length: 1 + Math.floor(random() * 3) }, () => sentence(random)).join(' ')}\n`
  }
  return text
}

/** The changing part of PUT `index`: a sentence with its number, different words each time. */
function revision(index: number): string {
  const random = seeded(index + 1)
  return `Revision ${index + 1} (ticket ${100_000 + ((index * 7919) % 900_000)}): ${sentence(random)}`
}

/** The instruction of PUT `index`: the base text with its revision sentence after the first paragraph, cut to `bytes`. */
function instructionOf(base: string, index: number, bytes: number): string {
  const at = base.indexOf('\n## 2.')
  return `${base.slice(0, at)}\n- ${revision(index)}\n${base.slice(at)}`.slice(0, bytes)
}

// ---------------------------------------------------------------------------------------------
// Children and the database

/** Where a mode's data lives and the service's environment (one APP_KEY across restarts). */
interface Target {
  mode: Mode
  env: Record<string, string>
  dataDir: string | null
}

function targetOf(bench: Bench, mode: Mode, upstreamUrl: string): Target {
  const dataDir = mode === 'pglite' ? mkdtempSync(path.join(os.tmpdir(), 'aw-bench-versions-')) : null
  if (dataDir) bench.closers.push(async () => rmSync(dataDir, { recursive: true, force: true }))
  return {
    mode,
    dataDir,
    env: {
      ...CHILD_ENV,
      ...(dataDir ? { DATABASE_URL: '', DATA_DIR: dataDir } : { DATABASE_URL: bench.databaseUrl, DATA_DIR: '' }),
      APP_KEY: `base64:${randomBytes(32).toString('base64')}`,
      APP_URL: '',
      REDIS_URL: '',
      SIGN_IN_MAX_PER_ADDRESS: '1000000',
      SIGN_IN_MAX_PER_EMAIL: '1000000',
      OPENAI_API_KEY: 'sk-bench-versions',
      OPENAI_BASE_URL: upstreamUrl,
    },
  }
}

async function startService(bench: Bench, target: Target, env: Record<string, string> = {}): Promise<Child> {
  const service = await startChild('service', 'src/server.ts', { ...target.env, ...env }, { readyPath: '/ready', timeoutMs: 120_000 })
  bench.children.push(service)
  return service
}

async function stopService(bench: Bench, service: Child): Promise<void> {
  await stopChild(service)
  bench.children.splice(bench.children.indexOf(service), 1)
}

/** SQL from this process: `pg` on PostgreSQL (one connection), PGlite on the stopped service's directory. */
interface Db {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>
  close(): Promise<void>
}

async function openDb(bench: Bench, target: Target): Promise<Db> {
  if (target.mode === 'postgres') {
    const client = new pg.Client({ connectionString: bench.databaseUrl })
    await client.connect()
    return {
      query: async <T>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as T[],
      close: () => client.end(),
    }
  }
  const db = await PGlite.create(path.join(target.dataDir!, 'pglite'), { extensions: { vector } })
  return { query: async <T>(sql: string, params: unknown[] = []) => (await db.query<T>(sql, params)).rows, close: () => db.close() }
}

// ---------------------------------------------------------------------------------------------
// Requests

interface Api {
  url: string
  token: string
}

const headersOf = (api: Api) => ({ authorization: `Bearer ${api.token}`, 'content-type': 'application/json' })

/** The part of an agent these requests read back. */
interface AgentRead {
  uuid: string
  version: number
  visibility: string
}

async function createAgent(api: Api, name: string, instruction: string): Promise<AgentRead> {
  const response = await fetch(`${api.url}/api/v1/agents`, {
    method: 'POST',
    headers: headersOf(api),
    body: JSON.stringify({ name, instruction }),
  })
  return (JSON.parse((await expectOk(response, 'POST /api/v1/agents')).toString('utf8')) as { data: AgentRead }).data
}

/** One `PUT agents/{uuid}`: ms to the whole answer, and the agent it answers. */
async function putOnce(api: Api, uuid: string, body: Record<string, unknown>): Promise<{ elapsed: number; agent: AgentRead }> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${uuid}`, { method: 'PUT', headers: headersOf(api), body: JSON.stringify(body) })
  const text = await response.text()
  const elapsed = now() - start
  if (response.status !== 200) throw new Error(`PUT agents/${uuid}: HTTP ${response.status} ${text.slice(0, 300)}`)
  return { elapsed, agent: (JSON.parse(text) as { data: AgentRead }).data }
}

/** One run answered when done (the runs benchmark's (b)), pinned to `version` or not: ms to the whole answer, the answer checked. */
async function runOnce(api: Api, uuid: string, version: number | null, expected: number): Promise<number> {
  const start = now()
  const response = await fetch(`${api.url}/api/v1/agents/${uuid}/run`, {
    method: 'POST',
    headers: headersOf(api),
    body: JSON.stringify(version === null ? { input: INPUT } : { input: INPUT, version }),
  })
  const text = await response.text()
  const elapsed = now() - start
  if (response.status !== 200) throw new Error(`run: HTTP ${response.status} ${text.slice(0, 300)}`)
  const { data } = JSON.parse(text) as { data: { run: { status: string; output: string; agent_version: number | null } } }
  if (data.run.status !== 'succeeded' || data.run.output !== `Echo: ${INPUT}`)
    throw new Error(`run: ${data.run.status} ${JSON.stringify(data.run.output)}`)
  if (data.run.agent_version !== expected) throw new Error(`run: agent_version ${data.run.agent_version}, expected ${expected}`)
  return elapsed
}

/** `times` sequential calls of `once`. */
async function sequential<T>(times: number, once: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = []
  for (let index = 0; index < times; index++) results.push(await once(index))
  return results
}

/** `GET /api/v1/ping` sequentially: the service's CPU per request, to tell how busy the machine is (about 0.17 ms when quiet). */
async function pingCpuMs(api: Api, pid: number): Promise<number | null> {
  const ping = async () => {
    const response = await fetch(`${api.url}/api/v1/ping`)
    await response.arrayBuffer()
  }
  await sequential(30, ping)
  const cpu0 = cpuSeconds(pid)
  await sequential(200, ping)
  const cpu1 = cpuSeconds(pid)
  return cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / 200
}

// ---------------------------------------------------------------------------------------------
// Statistics

interface Summary {
  n: number
  p50: number
  p95: number
  p99: number
  max: number
}

/** Nearest-rank percentiles of `values` (ms). */
function summarise(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN
  return { n: sorted.length, p50: rank(0.5), p95: rank(0.95), p99: rank(0.99), max: sorted.at(-1) ?? NaN }
}

/** Runs each of `kinds` once per round, the order rotating each round: `rounds` samples of each (ms). */
async function interleaved<K extends string>(kinds: K[], rounds: number, once: (kind: K) => Promise<number>): Promise<Record<K, number[]>> {
  const samples = Object.fromEntries(kinds.map((kind) => [kind, [] as number[]])) as Record<K, number[]>
  for (let round = 0; round < rounds; round++)
    for (let step = 0; step < kinds.length; step++) {
      const kind = kinds[(round + step) % kinds.length]
      samples[kind].push(await once(kind))
    }
  return samples
}

// ---------------------------------------------------------------------------------------------
// (1) Storage

type Variant = 'instruction' | 'description'

/** `agent_versions` and `outbox_events` in bytes: the total (heap, TOAST, indexes) and its parts. */
interface Sizes {
  versions: { total: number; heap: number; toast: number; indexes: number; rows: number }
  outboxTotal: number
}

async function sizesOf(db: Db): Promise<Sizes> {
  const [row] = await db.query<Record<string, string>>(
    `select pg_total_relation_size('agent_versions')::text as total, pg_relation_size('agent_versions')::text as heap,
       pg_indexes_size('agent_versions')::text as indexes, (select count(*) from agent_versions)::text as rows,
       pg_total_relation_size('outbox_events')::text as outbox`,
  )
  const total = Number(row.total)
  const heap = Number(row.heap)
  const indexes = Number(row.indexes)
  return { versions: { total, heap, toast: total - heap - indexes, indexes, rows: Number(row.rows) }, outboxTotal: Number(row.outbox) }
}

interface VariantResult {
  variant: Variant
  versions: number
  /** `agent_versions` and `outbox_events` after the variant, and what the variant added. */
  after: Sizes
  added: { versionsTotal: number; heap: number; toast: number; indexes: number; outboxTotal: number }
  /** Per version of the variant: the snapshot as stored (`pg_column_size`, compressed) and as JSON text, bytes. */
  snapshotStored: number
  snapshotJson: number
  /** The outbox event's `data` as stored, per version, bytes. */
  eventStored: number
  put: Summary
}

interface StorageResult {
  bytes: number
  /** gzip's size of the instruction over its size: how compressible the text is. */
  gzipRatio: number
  /** The long instruction's agent (its uuid, current version), for (2). */
  agent: AgentRead
  before: Sizes
  variants: VariantResult[]
}

/**
 * (1): P PUTs of each variant on an agent of its own; after each variant the sizes, read from this
 * process (`withDb` stops and starts the PGlite service around it, so `api` answers the running one).
 */
async function storagePhase(api: () => Api, base: string, withDb: <T>(work: (db: Db) => Promise<T>) => Promise<T>): Promise<StorageResult> {
  const before = await withDb(sizesOf)
  const variants: VariantResult[] = []
  let agent: AgentRead | null = null
  let last = before
  for (const variant of ['instruction', 'description'] as Variant[]) {
    const created = await createAgent(api(), `Versions ${variant}`, base.slice(0, settings.bytes))
    process.stdout.write(`(1) ${fmt(settings.puts)} PUTs changing the ${variant} ... `)
    const times: number[] = []
    let version = created.version
    for (let index = 0; index < settings.puts; index++) {
      const body =
        variant === 'instruction'
          ? { instruction: instructionOf(base, index, settings.bytes) }
          : { description: `Support assistant. ${revision(index)}` }
      const put = await putOnce(api(), created.uuid, body)
      if (put.agent.version !== version + 1) throw new Error(`(1) PUT ${index + 1}: version ${put.agent.version}, expected ${version + 1}`)
      version = put.agent.version
      times.push(put.elapsed)
    }
    if (variant === 'instruction') agent = { ...created, version }
    const { after, row } = await withDb(async (db) => {
      const after = await sizesOf(db)
      const [row] = await db.query<{ stored: string; json: string; event: string }>(
        `select (select avg(pg_column_size(v.snapshot)) from agent_versions v join agents a on a.id = v.agent_id where a.uuid = $1 and v.version > 1)::text as stored,
           (select avg(octet_length(v.snapshot::text)) from agent_versions v join agents a on a.id = v.agent_id where a.uuid = $1 and v.version > 1)::text as json,
           (select avg(pg_column_size(e.data)) from outbox_events e where e.type = 'agent.version_created' and e.data->>'agent_uuid' = $2 and (e.data->>'version')::int > 1)::text as event`,
        [created.uuid, created.uuid],
      )
      return { after, row }
    })
    const result: VariantResult = {
      variant,
      versions: settings.puts,
      after,
      added: {
        versionsTotal: after.versions.total - last.versions.total,
        heap: after.versions.heap - last.versions.heap,
        toast: after.versions.toast - last.versions.toast,
        indexes: after.versions.indexes - last.versions.indexes,
        outboxTotal: after.outboxTotal - last.outboxTotal,
      },
      snapshotStored: Number(row.stored),
      snapshotJson: Number(row.json),
      eventStored: Number(row.event),
      put: summarise(times),
    }
    last = after
    variants.push(result)
    console.log(
      `agent_versions ${fmt(after.versions.total / MB, 2)} MB (+${fmt(result.added.versionsTotal / MB, 2)} MB); ` +
        `snapshot ${fmt(result.snapshotStored / 1024, 1)} KB stored of ${fmt(result.snapshotJson / 1024, 1)} KB; outbox +${fmt(result.added.outboxTotal / MB, 2)} MB`,
    )
  }
  const instruction = base.slice(0, settings.bytes)
  return { bytes: settings.bytes, gzipRatio: gzipSync(instruction).length / instruction.length, agent: agent!, before, variants }
}

// ---------------------------------------------------------------------------------------------
// (2) Pinned runs

type RunKind = 'long-current' | 'long-pinned' | 'short-current' | 'short-pinned'
const RUN_KINDS: RunKind[] = ['long-current', 'long-pinned', 'short-current', 'short-pinned']

/** The two agents of (2) and the versions their runs use. */
interface RunAgents {
  long: { uuid: string; current: number; pinned: number }
  short: { uuid: string; current: number; pinned: number }
}

interface PinnedResult {
  agents: RunAgents
  summaries: Record<RunKind, Summary>
  /** Pinned p50 − current p50, and the median of the rounds' differences, per agent (ms). */
  added: { long: { p50: number; paired: number }; short: { p50: number; paired: number } }
  sql: Record<RunKind, SqlPerRequest> | null
}

function runOf(agents: RunAgents, kind: RunKind): { uuid: string; version: number | null; expected: number } {
  const agent = kind.startsWith('long') ? agents.long : agents.short
  return kind.endsWith('pinned')
    ? { uuid: agent.uuid, version: agent.pinned, expected: agent.pinned }
    : { uuid: agent.uuid, version: null, expected: agent.current }
}

const runKind = (api: Api, agents: RunAgents) => (kind: RunKind) => {
  const run = runOf(agents, kind)
  return runOnce(api, run.uuid, run.version, run.expected)
}

/** The agents of (2): the long one of (1) (else a new one with 10 versions), and a short one with 2. */
async function runAgents(api: Api, base: string, storage: StorageResult | null): Promise<RunAgents> {
  let long = storage?.agent ?? null
  if (!long) {
    long = await createAgent(api, 'Versions pinned', base.slice(0, settings.bytes))
    for (let index = 0; index < 10; index++)
      long = (await putOnce(api, long.uuid, { instruction: instructionOf(base, index, settings.bytes) })).agent
  }
  const created = await createAgent(api, 'Versions pinned short', SHORT)
  const short = (await putOnce(api, created.uuid, { instruction: `${SHORT} Be polite.` })).agent
  return {
    long: { uuid: long.uuid, current: long.version, pinned: Math.ceil(long.version / 2) },
    short: { uuid: short.uuid, current: short.version, pinned: 1 },
  }
}

async function pinnedPhase(api: Api, agents: RunAgents): Promise<Omit<PinnedResult, 'sql'>> {
  process.stdout.write(`(2) runs: warm-up ${settings.warmup} rounds ... `)
  await interleaved(RUN_KINDS, settings.warmup, runKind(api, agents))
  process.stdout.write(`${settings.runs} rounds of ${RUN_KINDS.length} ... `)
  const samples = await interleaved(RUN_KINDS, settings.runs, runKind(api, agents))
  const summaries = Object.fromEntries(RUN_KINDS.map((kind) => [kind, summarise(samples[kind])])) as Record<RunKind, Summary>
  const paired = (agent: 'long' | 'short') =>
    summarise(samples[`${agent}-pinned`].map((ms, index) => ms - samples[`${agent}-current`][index])).p50
  const added = {
    long: { p50: summaries['long-pinned'].p50 - summaries['long-current'].p50, paired: paired('long') },
    short: { p50: summaries['short-pinned'].p50 - summaries['short-current'].p50, paired: paired('short') },
  }
  console.log(`pinned − current at p50: long ${signed(added.long.p50)} ms, short ${signed(added.short.p50)} ms`)
  return { agents, summaries, added }
}

// ---------------------------------------------------------------------------------------------
// (3) PUT

type PutKind = 'long-instruction' | 'long-visibility' | 'long-same-instruction' | 'short-instruction' | 'short-visibility'
const PUT_KINDS: PutKind[] = ['long-instruction', 'long-visibility', 'long-same-instruction', 'short-instruction', 'short-visibility']
/** Whether a PUT of the kind makes a version. */
const makesVersion = (kind: PutKind) => kind.endsWith('-instruction') && kind !== 'long-same-instruction'

/** An agent of (3), as the PUTs leave it. */
interface PutAgent {
  uuid: string
  version: number
  visibility: string
  instruction: string
  puts: number
}

interface PutAgents {
  long: PutAgent
  short: PutAgent
}

async function putAgents(api: Api, base: string): Promise<PutAgents> {
  const long = await createAgent(api, 'Versions PUT', base.slice(0, settings.bytes))
  const short = await createAgent(api, 'Versions PUT short', SHORT)
  return {
    long: { uuid: long.uuid, version: long.version, visibility: long.visibility, instruction: base.slice(0, settings.bytes), puts: 0 },
    short: { uuid: short.uuid, version: short.version, visibility: short.visibility, instruction: SHORT, puts: 0 },
  }
}

/** One PUT of `kind`, its answer's version checked: ms. */
function putKind(api: Api, base: string, agents: PutAgents) {
  return async (kind: PutKind): Promise<number> => {
    const agent = kind.startsWith('long') ? agents.long : agents.short
    const toggled = agent.visibility === 'private' ? 'workspace' : 'private'
    let body: Record<string, unknown>
    if (kind === 'long-same-instruction') body = { instruction: agent.instruction, visibility: toggled }
    else if (kind.endsWith('-visibility')) body = { visibility: toggled }
    else {
      agent.puts += 1
      agent.instruction =
        kind === 'long-instruction' ? instructionOf(base, 100_000 + agent.puts, settings.bytes) : `${SHORT} ${revision(agent.puts)}`
      body = { instruction: agent.instruction }
    }
    const put = await putOnce(api, agent.uuid, body)
    const expected = agent.version + (makesVersion(kind) ? 1 : 0)
    if (put.agent.version !== expected) throw new Error(`(3) ${kind}: version ${put.agent.version}, expected ${expected}`)
    agent.version = put.agent.version
    agent.visibility = put.agent.visibility
    return put.elapsed
  }
}

interface PutResult {
  summaries: Record<PutKind, Summary>
  sql: Record<PutKind, SqlPerRequest> | null
}

async function putPhase(api: Api, base: string): Promise<Omit<PutResult, 'sql'>> {
  const agents = await putAgents(api, base)
  process.stdout.write(`(3) PUTs: warm-up ${settings.warmup} rounds ... `)
  await interleaved(PUT_KINDS, settings.warmup, putKind(api, base, agents))
  process.stdout.write(`${settings.runs} rounds of ${PUT_KINDS.length} ... `)
  const samples = await interleaved(PUT_KINDS, settings.runs, putKind(api, base, agents))
  const summaries = Object.fromEntries(PUT_KINDS.map((kind) => [kind, summarise(samples[kind])])) as Record<PutKind, Summary>
  console.log(
    `p50 long: instruction ${fmt(summaries['long-instruction'].p50, 2)}, visibility ${fmt(summaries['long-visibility'].p50, 2)} ms; ` +
      `short: instruction ${fmt(summaries['short-instruction'].p50, 2)}, visibility ${fmt(summaries['short-visibility'].p50, 2)} ms`,
  )
  return { summaries }
}

// ---------------------------------------------------------------------------------------------
// SQL through the counting proxy (PostgreSQL)

interface SqlPerRequest {
  statements: number
  roundTrips: number
  serverMs: number
  /** Statement cycles per request by the shape of their first statement, and the server's ms for them, slowest first. */
  byShape: { shape: string; perRequest: number; msPerRequest: number }[]
}

function perRequest(counts: SqlCounts, timeline: TimelineEntry[], requests: number): SqlPerRequest {
  const shapes = new Map<string, { count: number; ms: number }>()
  for (const entry of timeline) {
    const shape = shapes.get(entry.shape) ?? { count: 0, ms: 0 }
    shape.count += 1
    shape.ms += entry.endMs - entry.startMs
    shapes.set(entry.shape, shape)
  }
  return {
    statements: counts.statements / requests,
    roundTrips: counts.roundTrips / requests,
    serverMs: counts.serverMs / requests,
    byShape: [...shapes.entries()]
      .map(([shape, { count, ms }]) => ({ shape, perRequest: count / requests, msPerRequest: ms / requests }))
      .sort((a, b) => b.msPerRequest - a.msPerRequest || a.shape.localeCompare(b.shape)),
  }
}

/** The agent's statement of a run (src/runs/runs.service.ts `requireAgent`) and of a PUT's access check, by its shape. */
const isAgentStatement = (shape: string) => shape.startsWith('select r.id::float8 as id, r.uuid')

/** Each kind's requests in a block of their own through the proxy, after 5 unmeasured ones: statements and server ms per request. */
async function profileSql(
  bench: Bench,
  target: Target,
  api: Api,
  base: string,
  runs: RunAgents | null,
  puts: boolean,
): Promise<{ runs: Record<RunKind, SqlPerRequest> | null; puts: Record<PutKind, SqlPerRequest> | null }> {
  const { counter, url } = await SqlCounter.start(bench.databaseUrl)
  bench.closers.push(() => counter.close())
  const service = await startService(bench, target, { DATABASE_URL: url })
  const proxied = { ...api, url: service.url }
  const block = async <K extends string>(kinds: K[], once: (kind: K) => Promise<number>) => {
    const result = {} as Record<K, SqlPerRequest>
    for (const kind of kinds) {
      await sequential(5, () => once(kind))
      await sleep(200)
      counter.take()
      counter.record()
      await sequential(settings.profileRuns, () => once(kind))
      await sleep(200)
      const timeline = counter.timeline()
      result[kind] = perRequest(counter.take(), timeline, settings.profileRuns)
    }
    return result
  }
  try {
    process.stdout.write(`SQL through the counting proxy, ${settings.profileRuns} of each kind ... `)
    const runSql = runs ? await block(RUN_KINDS, runKind(proxied, runs)) : null
    const putSql = puts ? await block(PUT_KINDS, putKind(proxied, base, await putAgents(proxied, base))) : null
    console.log('done')
    return { runs: runSql, puts: putSql }
  } finally {
    await stopService(bench, service)
  }
}

// ---------------------------------------------------------------------------------------------
// One mode

interface ModeResult {
  mode: Mode
  pingCpuMs: number | null
  storage: StorageResult | null
  pinned: PinnedResult | null
  put: PutResult | null
}

async function measureMode(bench: Bench, mode: Mode, upstreamUrl: string, base: string): Promise<ModeResult> {
  console.log(`\n== ${mode} ==`)
  const target = targetOf(bench, mode, upstreamUrl)
  let service = await startService(bench, target)
  const { token } = await signUp(service.url, 'Versions', `bench-versions-${randomBytes(5).toString('hex')}@example.com`)
  const api = (): Api => ({ url: service.url, token })

  /** Runs `work` on the database from this process: on PGlite with the service stopped, then started again. */
  const withDb = async <T>(work: (db: Db) => Promise<T>): Promise<T> => {
    if (mode === 'pglite') await stopService(bench, service)
    const db = await openDb(bench, target)
    try {
      return await work(db)
    } finally {
      await db.close()
      if (mode === 'pglite') service = await startService(bench, target)
    }
  }
  try {
    const storage = settings.phases.has('storage') ? await storagePhase(api, base, withDb) : null
    const agents = settings.phases.has('pinned') ? await runAgents(api(), base, storage) : null
    const pinned = agents ? await pinnedPhase(api(), agents) : null
    const put = settings.phases.has('put') ? await putPhase(api(), base) : null
    const sql =
      mode === 'postgres' && settings.profileRuns > 0 && (pinned || put)
        ? await profileSql(bench, target, api(), base, agents, put !== null)
        : null
    const pingCpu = await pingCpuMs(api(), service.process.pid!)
    return {
      mode,
      pingCpuMs: pingCpu,
      storage,
      pinned: pinned && { ...pinned, sql: sql?.runs ?? null },
      put: put && { ...put, sql: sql?.puts ?? null },
    }
  } finally {
    if (bench.children.includes(service)) await stopService(bench, service)
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const ms = (value: number, digits = 2) => (Number.isNaN(value) ? 'n/a' : fmt(value, digits))
const signed = (value: number, digits = 2) => `${value >= 0 ? '+' : '−'}${fmt(Math.abs(value), digits)}`
const verdict = (pass: boolean) => (pass ? '**met**' : '**not met**')
const modeName = (mode: Mode) => (mode === 'postgres' ? 'PostgreSQL' : 'PGlite')
const mb = (bytes: number) => fmt(bytes / MB, 2)
const kb = (bytes: number) => fmt(bytes / 1024, 1)

/** The storage target scaled to the variant's number of versions (25 MB per 1,000). */
const storageTarget = (versions: number) => (STORAGE_TARGET_MB * MB * versions) / STORAGE_TARGET_VERSIONS

function storageMarkdown(results: ModeResult[]): string[] {
  const rows = results.filter((result) => result.storage)
  if (!rows.length) return []
  const lines = [
    `### (1) Storage: ${fmt(settings.puts)} versions of an agent with a ${kb(settings.bytes)} KB instruction`,
    '',
    `Each variant on an agent of its own, ${fmt(settings.puts)} sequential \`PUT agents/{x}\`, each making a version. Sizes from \`pg_total_relation_size\` ` +
      '(heap + TOAST + indexes); "added" is what the variant added to the table; a snapshot "stored" is its `pg_column_size` (compressed), "JSON" its text.',
    '',
    `| mode | PUT changes | \`agent_versions\` after: total MB (heap / TOAST / indexes) | added by the variant, MB | per version: snapshot stored / JSON KB | \`outbox_events\` added, MB (event stored KB) | PUT p50 / p95 ms | target ≤ ${STORAGE_TARGET_MB} MB per ${fmt(STORAGE_TARGET_VERSIONS)} |`,
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |',
  ]
  for (const result of rows)
    for (const v of result.storage!.variants) {
      const a = v.after.versions
      lines.push(
        `| ${modeName(result.mode)} | ${v.variant === 'instruction' ? 'the instruction (a sentence with its number)' : '`description` only'} | ` +
          `${mb(a.total)} (${mb(a.heap)} / ${mb(a.toast)} / ${mb(a.indexes)}) | ${mb(v.added.versionsTotal)} | ${kb(v.snapshotStored)} / ${kb(v.snapshotJson)} | ` +
          `${mb(v.added.outboxTotal)} (${kb(v.eventStored)}) | ${ms(v.put.p50)} / ${ms(v.put.p95)} | ${verdict(v.added.versionsTotal <= storageTarget(v.versions))} |`,
      )
    }
  const before = rows[0].storage!.before.versions
  lines.push(
    '',
    `Before the first variant the table held ${fmt(before.rows)} rows in ${mb(before.total)} MB (${modeName(rows[0].mode)}). ` +
      `The instruction is generated English-like text of which gzip keeps ${fmt(rows[0].storage!.gzipRatio * 100)}% (20 KB of real English prose: 35-38%).`,
    '',
  )
  return lines
}

function pinnedMarkdown(results: ModeResult[]): string[] {
  const rows = results.filter((result) => result.pinned)
  if (!rows.length) return []
  const a = rows[0].pinned!.agents
  const lines = [
    `### (2) A run pinned to a version against one of the current agent`,
    '',
    `\`POST agents/{x}/run\` answered when done, ${settings.runs} rounds of the four kinds after ${settings.warmup} of warm-up, interleaved run by run ` +
      `(the order rotating each round). Long agent: ${kb(settings.bytes)} KB instruction, version ${a.long.current} current, version ${a.long.pinned} pinned; ` +
      `short agent: "${SHORT}", version ${a.short.current} current, version ${a.short.pinned} pinned.`,
    '',
    `| mode | agent | current p50 / p95 / p99 ms | pinned p50 / p95 / p99 ms | added at p50 | median of the rounds' differences | target ≤ +${PINNED_TARGET_MS} ms at p50 |`,
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
  ]
  for (const result of rows) {
    const p = result.pinned!
    for (const agent of ['long', 'short'] as const) {
      const c = p.summaries[`${agent}-current`]
      const q = p.summaries[`${agent}-pinned`]
      lines.push(
        `| ${modeName(result.mode)} | ${agent === 'long' ? `${kb(settings.bytes)} KB instruction` : 'short instruction'} | ${ms(c.p50)} / ${ms(c.p95)} / ${ms(c.p99)} | ` +
          `${ms(q.p50)} / ${ms(q.p95)} / ${ms(q.p99)} | ${signed(p.added[agent].p50)} ms | ${signed(p.added[agent].paired)} ms | ${verdict(p.added[agent].p50 <= PINNED_TARGET_MS)} |`,
      )
    }
  }
  const sql = rows.find((result) => result.pinned!.sql)?.pinned!.sql
  if (sql)
    lines.push(
      '',
      `PostgreSQL, the statements of a run through the counting proxy (${settings.profileRuns} runs of each kind in a block; server ms from a statement's first message to ReadyForQuery, proxy hop included):`,
      '',
      '| run | statements | server ms per run | of which the agent statement |',
      '| --- | ---: | ---: | ---: |',
      ...RUN_KINDS.map(
        (kind) =>
          `| ${kind} | ${fmt(sql[kind].statements, 1)} | ${ms(sql[kind].serverMs)} | ` +
          `${ms(sql[kind].byShape.filter((row) => isAgentStatement(row.shape)).reduce((sum, row) => sum + row.msPerRequest, 0))} |`,
      ),
    )
  return [...lines, '']
}

const PUT_NAMES: Record<PutKind, string> = {
  'long-instruction': 'long agent: the instruction changed (a version)',
  'long-visibility': 'long agent: `visibility` only (no version)',
  'long-same-instruction': 'long agent: its unchanged instruction + `visibility` (no version, the same body size)',
  'short-instruction': 'short agent: the instruction changed (a version)',
  'short-visibility': 'short agent: `visibility` only (no version)',
}

/** Rows of statement shapes for two kinds side by side (those run at least every other request), then the rest together. */
function shapeRows(a: SqlPerRequest, b: SqlPerRequest): string[] {
  const shapes = [...new Set([...a.byShape, ...b.byShape].filter((row) => row.perRequest >= 0.5).map((row) => row.shape))]
  const cell = (p: SqlPerRequest, shape: string) => {
    const row = p.byShape.find((item) => item.shape === shape)
    return row ? `${fmt(row.perRequest, 1)} × ${ms(row.msPerRequest)} ms` : '—'
  }
  const rest = (p: SqlPerRequest) => p.byShape.filter((row) => !shapes.includes(row.shape)).reduce((sum, row) => sum + row.msPerRequest, 0)
  return [
    ...shapes.map((shape) => `| \`${shape.replace(/\|/g, '\\|')}\` | ${cell(a, shape)} | ${cell(b, shape)} |`),
    `| the rest | ${ms(rest(a))} ms | ${ms(rest(b))} ms |`,
  ]
}

function putMarkdown(results: ModeResult[]): string[] {
  const rows = results.filter((result) => result.put)
  if (!rows.length) return []
  const lines = [
    `### (3) \`PUT agents/{x}\` that records a version against one that records none`,
    '',
    `Two fresh agents (${kb(settings.bytes)} KB instruction, and "${SHORT}"), ${settings.runs} rounds of the five kinds after ${settings.warmup} of warm-up, interleaved PUT by PUT.`,
    '',
    '| mode | PUT | p50 / p95 ms | − visibility-only p50 of the same agent |',
    '| --- | --- | ---: | ---: |',
  ]
  for (const result of rows) {
    const s = result.put!.summaries
    for (const kind of PUT_KINDS) {
      const reference = s[kind.startsWith('long') ? 'long-visibility' : 'short-visibility']
      lines.push(
        `| ${modeName(result.mode)} | ${PUT_NAMES[kind]} | ${ms(s[kind].p50)} / ${ms(s[kind].p95)} | ${kind.endsWith('-visibility') ? '' : `${signed(s[kind].p50 - reference.p50)} ms`} |`,
      )
    }
  }
  const sql = rows.find((result) => result.put!.sql)?.put!.sql
  if (sql) {
    lines.push(
      '',
      `PostgreSQL, the statements of a PUT through the counting proxy (${settings.profileRuns} of each kind in a block, on two more fresh agents):`,
      '',
      '| PUT | statements | server ms per PUT |',
      '| --- | ---: | ---: |',
      ...PUT_KINDS.map((kind) => `| ${PUT_NAMES[kind]} | ${fmt(sql[kind].statements, 1)} | ${ms(sql[kind].serverMs)} |`),
      '',
      "The long agent's PUTs by statement (a cycle named by its first statement; per PUT, count and server ms; under 0.5 per PUT: the service's background loops):",
      '',
      '| statement | instruction changed (a version) | `visibility` only (no version) |',
      '| --- | ---: | ---: |',
      ...shapeRows(sql['long-instruction'], sql['long-visibility']),
    )
  }
  return [...lines, '']
}

// ---------------------------------------------------------------------------------------------

async function main(bench: Bench) {
  const loadBefore = os.loadavg()
  const started = now()
  const base = baseInstruction(settings.bytes)
  const upstream = await startUpstreamChild()
  bench.children.push(upstream)
  console.log(`upstream ${upstream.url}`)
  const results: ModeResult[] = []
  for (const mode of settings.modes) results.push(await measureMode(bench, mode, upstream.url, base))

  const date = new Date().toISOString()
  const machine = machineOf(bench.postgres)
  const md = [
    `Versions benchmark of ${date}: ${machine.line}; PostgreSQL ${bench.postgres}; load average ${loadBefore.map((load) => load.toFixed(2)).join(', ')} before, ` +
      `${machine.json.loadAverage.map((load) => load.toFixed(2)).join(', ')} after; ${fmt((now() - started) / 1000)} s in all. ` +
      `Service CPU per \`GET /api/v1/ping\` (about 0.17 ms on a quiet machine): ${results.map((result) => `${modeName(result.mode)} ${result.pingCpuMs === null ? 'n/a' : ms(result.pingCpuMs)} ms`).join(', ')}.`,
    '',
    ...storageMarkdown(results),
    ...pinnedMarkdown(results),
    ...putMarkdown(results),
  ].join('\n')
  console.log(`\n${md}`)
  writeResults(
    ['versions-latest'],
    { date, machine: machine.json, loadAverageBefore: loadBefore, settings: { ...settings, phases: [...settings.phases] }, results },
    md + '\n',
  )
}

await runBench('aw_bench_versions', main)
