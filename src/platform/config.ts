/**
 * Configuration from the environment (docs/getting-started.md, "Configuration").
 *
 * One zod schema reads `process.env` (after an optional `.env` file) into a typed {@link Config}.
 * A bad value stops start-up with a {@link ConfigError} whose message names the variable; the
 * value itself is never echoed, since several variables hold secrets.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { z } from 'zod'

/** Default of `DATABASE_CONNECT_TIMEOUT_MS` (also of databases opened without a configuration: tests, CLIs). */
export const DATABASE_CONNECT_TIMEOUT_MS = 10_000
/** Default of `DATABASE_STATEMENT_TIMEOUT_MS` (idem). */
export const DATABASE_STATEMENT_TIMEOUT_MS = 60_000

const bool = z.enum(['true', 'false', '1', '0']).transform((value) => value === 'true' || value === '1')
const int = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))

/** `base64:` followed by 32 bytes, Laravel's spelling for an AES-256 key. */
const appKey = z
  .string()
  .regex(/^base64:[A-Za-z0-9+/]{43}=$/, 'must be "base64:" followed by 32 bytes in base64')

/** The samplers `OTEL_TRACES_SAMPLER` may name (the OpenTelemetry specification's built-in ones). */
export const TRACES_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const

/** The OTLP protocols the trace exporter speaks (gRPC is not offered). */
const otlpProtocol = z.enum(['http/protobuf', 'http/json'], { error: 'must be http/protobuf or http/json (grpc is not supported)' })

/**
 * Tracing (docs/operations.md, "Traces"), from the standard OpenTelemetry variables; null when no
 * OTLP endpoint is set (nothing is exported then).
 */
export interface TracingConfig {
  /**
   * Where spans are posted: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as it is, else
   * `OTEL_EXPORTER_OTLP_ENDPOINT` followed by `v1/traces` (the specification's rule).
   */
  url: string
  /** `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`. The exporter reads `OTEL_EXPORTER_OTLP_HEADERS` and the timeout itself. */
  protocol: 'http/protobuf' | 'http/json'
  /** `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`). */
  sampler: (typeof TRACES_SAMPLERS)[number]
  /** `OTEL_TRACES_SAMPLER_ARG`: the ratio of the `traceidratio` samplers, 0..1 (default 1). */
  samplerRatio: number
  /** `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`: prompt, answer and tool texts on spans. */
  captureMessageContent: boolean
  /** The batch span processor (`OTEL_BSP_*`): milliseconds between exports, spans queued at most (more are dropped), milliseconds an export may take. */
  batch: { scheduleDelayMs: number; maxQueueSize: number; exportTimeoutMs: number }
}

const EnvSchema = z.object({
  /** `production`, `development` or `test`; only changes log formatting. */
  NODE_ENV: z.enum(['production', 'development', 'test']).default('development'),
  /** TCP port of the HTTP server. */
  PORT: int(0, 65535).default(3000),
  /** Interface to listen on; 0.0.0.0 to accept connections from other machines. */
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Public base URL used in links (`profile_photo_url`, paginator links); defaults to http://HOST:PORT. */
  APP_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** PostgreSQL connection string; when unset the embedded PGlite database in DATA_DIR is used. */
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  /** Folder of the embedded database, the generated APP_KEY and uploaded media. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** Redis connection string; when set the cache and rate limits are shared through Redis. */
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  /** Encryption key for stored secrets; generated into DATA_DIR on the first embedded start. */
  APP_KEY: appKey.optional(),
  /**
   * Earlier APP_KEY values, comma-separated, same format: still tried (by key id) to decrypt
   * secrets sealed before a rotation; `npm run keys:rotate` re-seals them under APP_KEY.
   */
  APP_PREVIOUS_KEYS: z.string().optional(),
  /** OTLP/HTTP base URL of a trace collector (its `/v1/traces` is used); tracing is on when this or the next is set. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  /** OTLP/HTTP URL traces are posted to as it is. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol.optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol.optional(),
  /** `none` turns tracing off with an endpoint set; `otlp` is the only exporter. */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'must be otlp or none' }).default('otlp'),
  /** `true` turns tracing off (the specification's switch). */
  OTEL_SDK_DISABLED: bool.default(false),
  OTEL_TRACES_SAMPLER: z.enum(TRACES_SAMPLERS).default('parentbased_always_on'),
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),
  OTEL_BSP_SCHEDULE_DELAY: int(1, 3_600_000).default(5_000),
  OTEL_BSP_MAX_QUEUE_SIZE: int(1, 1_000_000).default(2_048),
  OTEL_BSP_EXPORT_TIMEOUT: int(1, 3_600_000).default(30_000),
  /** Whether spans record prompt, answer and tool texts (off: only their sizes and kinds). */
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: bool.default(false),
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Whether `POST /api/v1/auth/sign-up` is open. */
  SIGN_UP_ENABLED: bool.default(true),
  /** Whether `POST /api/v1/auth/sign-in` accepts e-mail and password (docs/api/sso.md; off: 403). */
  PASSWORD_SIGN_IN: bool.default(true),
  /** Issuer URL of the OpenID Connect provider (docs/api/sso.md); single sign-on is on when this and OIDC_CLIENT_ID are set. */
  OIDC_ISSUER: z.url({ protocol: /^https?$/ }).optional(),
  /** This service's client id at the provider. */
  OIDC_CLIENT_ID: z.string().min(1).max(255).optional(),
  /** This service's client secret at the provider; unset for a public client (PKCE only). Never logged or answered. */
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  /** Scopes asked of the provider, space-separated; must include `openid`. */
  OIDC_SCOPES: z
    .string()
    .regex(/(^|\s)openid(\s|$)/, 'must include the scope "openid"')
    .default('openid email profile'),
  /** The label of the sign-in button (`GET /api/v1/auth/providers`). */
  OIDC_NAME: z.string().trim().min(1).max(80).default('Single sign-on'),
  /** Whether a provider's user with no account here gets one (a user and their primary workspace). */
  OIDC_ALLOW_SIGN_UP: bool.default(true),
  /** Let OIDC_ISSUER be an `http:` URL (development and tests only: tokens would travel in clear). */
  OIDC_ALLOW_HTTP: bool.default(false),
  /** Lifetime of a basic (sign-in) token in days. */
  BASIC_TOKEN_TTL_DAYS: int(1, 3650).default(30),
  /** Trusted integrating services as `service_id:key` pairs separated by commas (docs/api/authentication.md). */
  SERVICE_KEYS: z.string().default(''),
  /** Sign-in attempts allowed per e-mail address within SIGN_IN_WINDOW_SECONDS. */
  SIGN_IN_MAX_PER_EMAIL: int(1, 1_000_000).default(10),
  /** Sign-in and sign-up attempts allowed per client address within SIGN_IN_WINDOW_SECONDS. */
  SIGN_IN_MAX_PER_ADDRESS: int(1, 1_000_000).default(60),
  /** Window of the sign-in rate limits, in seconds. */
  SIGN_IN_WINDOW_SECONDS: int(1, 86_400).default(60),
  /** Largest JSON body accepted, in bytes (413 above). */
  BODY_LIMIT_BYTES: int(1024, 100 * 1024 * 1024).default(1024 * 1024),
  /** Largest file `POST /api/v1/media` accepts, in bytes (413 above; docs/api/conventions.md: 25 MiB). */
  UPLOAD_MAX_BYTES: int(1, 10 * 1024 * 1024 * 1024).default(25 * 1024 * 1024),
  /** How long a shutdown waits for in-flight requests, in milliseconds. */
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(10_000),
  /** Trust X-Forwarded-For for the client address (behind a reverse proxy). */
  TRUST_PROXY: bool.default(false),
  /** Work background jobs inside `npm start` (docs/api/conventions.md). */
  WORKER: bool.default(true),
  /** Size of the PostgreSQL connection pool per process. */
  DATABASE_POOL_MAX: int(1, 1000).default(10),
  /**
   * Longest wait for a PostgreSQL connection, in milliseconds: opening a new one, and waiting for
   * a free one of the pool (a request answers 503 past it). docs/operations.md, "Database deadlines".
   */
  DATABASE_CONNECT_TIMEOUT_MS: int(100, 600_000).default(DATABASE_CONNECT_TIMEOUT_MS),
  /** Longest a PostgreSQL statement may run, in milliseconds (PostgreSQL's `statement_timeout`); 0 for none. Migrations have none. */
  DATABASE_STATEMENT_TIMEOUT_MS: int(0, 86_400_000).default(DATABASE_STATEMENT_TIMEOUT_MS),
  /** Server-wide OpenAI key, used when neither the caller nor the workspace has an account. */
  OPENAI_API_KEY: z.string().optional(),
  /** Base URL of the OpenAI API or of any OpenAI-compatible server (vLLM, LM Studio, a test server). */
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Server-wide Anthropic key. */
  ANTHROPIC_API_KEY: z.string().optional(),
  /** Base URL of the Anthropic API. */
  ANTHROPIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Server-wide key of the `openai-compatible` provider (many such servers need none). */
  OPENAI_COMPATIBLE_API_KEY: z.string().optional(),
  /** Base URL of the `openai-compatible` provider when an account gives none. */
  OPENAI_COMPATIBLE_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Base URL of Ollama's OpenAI-compatible API. */
  OLLAMA_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Model slug of agents whose metadata names none; when it has no usable credential, `local-test-model`. */
  DEFAULT_MODEL: z.string().min(1).max(120).default('gpt-4o-mini'),
  /**
   * Embedding model of agent knowledge, asked of the provider of the agent's model
   * (docs/api/knowledge.md, "Retrieval").
   */
  EMBEDDING_MODEL: z.string().min(1).max(120).default('text-embedding-3-small'),
  /** Longest wait for a model's answer (whole run step), in milliseconds (504 past it). */
  LLM_TIMEOUT_MS: int(1, 3_600_000).default(120_000),
  /** Most model steps (calls) in one run; each tool round trip is one more step. */
  RUN_MAX_STEPS: int(1, 100).default(8),
  /**
   * How often a process refreshes the heartbeat of the runs it executes, in milliseconds; a run
   * whose heartbeat is 3 beats old is ended `interrupted` by any process (its process died).
   */
  RUN_HEARTBEAT_MS: int(100, 60_000).default(3_000),
  /** Seconds a tool call may wait for a person's decision; past it the approval expires and counts as denied. */
  APPROVAL_TTL_SECONDS: int(1, 31_536_000).default(86_400),
  /** Longest wait for one tool HTTP call, in milliseconds. */
  TOOL_TIMEOUT_MS: int(1, 600_000).default(15_000),
  /** Largest tool response body read, in bytes; a larger one is cut off and reported as a failed call. */
  TOOL_MAX_RESPONSE_BYTES: int(1, 100 * 1024 * 1024).default(1024 * 1024),
  /** Let tools call private, link-local and loopback addresses (off: such calls fail; tests turn it on). */
  TOOL_ALLOW_PRIVATE_NETWORK: bool.default(false),
  /**
   * Most bytes one crawl of a site reads (pages, robots.txt and sitemaps together; docs/api/knowledge.md,
   * "Crawling a site"); past it the crawl stops, adds what it found and deletes nothing.
   */
  KNOWLEDGE_CRAWL_MAX_BYTES: int(1024, 10 * 1024 * 1024 * 1024).default(100 * 1024 * 1024),
  /**
   * Longest one crawl of a site reads, in milliseconds (idem). At most 8 minutes: a crawl runs inside
   * its root's sync, whose claim lapses after 10.
   */
  KNOWLEDGE_CRAWL_TIMEOUT_MS: int(1000, 480_000).default(300_000),
  /** Longest a workflow execution may run when its `settings.timeout_seconds` says nothing, in seconds. */
  WORKFLOW_TIMEOUT_SECONDS: int(1, 86_400).default(300),
  /** Most background executions of one workspace running at once, across every worker. */
  WORKFLOW_CONCURRENCY: int(1, 1000).default(10),
  /** How often a process refreshes the heartbeat of the executions it runs, in milliseconds; after 3 missed beats the recovery sweep resumes or fails one. */
  WORKFLOW_HEARTBEAT_MS: int(100, 600_000).default(3_000),
  /** Largest webhook body accepted (`POST /api/v1/hooks/{webhook_token}`), in bytes (413 above). */
  WEBHOOK_BODY_LIMIT_BYTES: int(1, 100 * 1024 * 1024).default(1024 * 1024),
  /** Let outbound webhook endpoints be private, link-local and loopback addresses (docs/api/webhooks.md; off: such a `url` is a 400). */
  WEBHOOK_ALLOW_PRIVATE_NETWORK: bool.default(false),
  /**
   * Seconds between a failed outbound webhook attempt and the next, comma-separated: N delays,
   * N retries, N + 1 attempts (docs/api/webhooks.md, "Delivery"). Empty: no retries.
   */
  WEBHOOK_RETRY_DELAYS: z
    .string()
    .regex(/^\s*(\d{1,9}\s*(,\s*\d{1,9}\s*)*)?$/, 'expected comma-separated whole seconds')
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((raw) => raw.split(',').map((part) => part.trim()).filter(Boolean).map(Number)),
  /** Seconds an endpoint's deliveries may all fail before it is disabled (default 5 days). */
  WEBHOOK_DISABLE_AFTER_SECONDS: int(1, 31_536_000).default(432_000),
  AUDIT_RETENTION_DAYS: int(1, 36_500).default(365),
  /** Longest wait for an endpoint's answer to one attempt, in milliseconds (a 2xx later than this is a failure). */
  WEBHOOK_TIMEOUT_MS: int(1, 600_000).default(15_000),
  /**
   * Bearer token `GET /metrics` asks for (docs/operations.md, "Metrics"); unset: only loopback
   * callers get the metrics. Never logged.
   */
  METRICS_TOKEN: z.string().regex(/^[\x21-\x7e]{16,}$/, 'must be at least 16 printable characters, without spaces').optional(),
})

/** Typed configuration, as the rest of the code sees it. */
export interface Config {
  env: 'production' | 'development' | 'test'
  port: number
  host: string
  appUrl: string
  databaseUrl: string | undefined
  dataDir: string
  redisUrl: string | undefined
  /** 32-byte AES-256 key. */
  appKey: Buffer
  /** Earlier 32-byte keys, tried for decryption only (APP_PREVIOUS_KEYS). */
  previousAppKeys: Buffer[]
  logLevel: string
  signUpEnabled: boolean
  /** Whether e-mail and password sign-in is open (PASSWORD_SIGN_IN). */
  passwordSignIn: boolean
  /** OpenID Connect sign-in (docs/api/sso.md), null when OIDC_ISSUER or OIDC_CLIENT_ID is unset. */
  oidc: OidcConfig | null
  basicTokenTtlDays: number
  /** service key -> service_id */
  serviceKeys: Map<string, string>
  signIn: { maxPerEmail: number; maxPerAddress: number; windowSeconds: number }
  bodyLimitBytes: number
  /** Largest upload (`POST /api/v1/media`), in bytes. */
  uploadMaxBytes: number
  shutdownTimeoutMs: number
  trustProxy: boolean
  worker: boolean
  databasePoolMax: number
  /** Milliseconds to open a PostgreSQL connection or get a free one from the pool (DATABASE_CONNECT_TIMEOUT_MS). */
  databaseConnectTimeoutMs: number
  /** Milliseconds a PostgreSQL statement may run, 0 for no limit (DATABASE_STATEMENT_TIMEOUT_MS). */
  databaseStatementTimeoutMs: number
  /** Server-wide provider settings, by built-in provider driver. */
  llm: {
    openai: { apiKey?: string; baseUrl?: string }
    anthropic: { apiKey?: string; baseUrl?: string }
    openaiCompatible: { apiKey?: string; baseUrl?: string }
    ollama: { baseUrl: string }
    defaultModel: string
    /** Model id of knowledge embeddings. */
    embeddingModel: string
    /** Milliseconds. */
    timeoutMs: number
    maxSteps: number
    /** Milliseconds between heartbeats of the runs a process executes. */
    heartbeatMs: number
    /** Seconds an approval stays pending before it expires (docs/api/runs.md, "Approvals"). */
    approvalTtlSeconds: number
  }
  /** Outgoing tool calls. */
  tools: { timeoutMs: number; maxResponseBytes: number; allowPrivateNetwork: boolean }
  /** Crawls of a site by URL knowledge documents: bytes and milliseconds one crawl may spend (docs/api/knowledge.md, "Crawling a site"). */
  knowledge: { crawlMaxBytes: number; crawlTimeoutMs: number }
  /** Workflow executions. */
  workflows: { timeoutSeconds: number; concurrency: number; heartbeatMs: number; webhookBodyLimitBytes: number }
  /** Tracing (docs/operations.md, "Traces"); null: off. */
  tracing: TracingConfig | null
  /** Outbound webhooks (docs/api/webhooks.md). */
  webhooks: {
    allowPrivateNetwork: boolean
    /** Seconds before each retry of a failed attempt. */
    retryDelays: number[]
    /** Seconds of failures only before an endpoint is disabled. */
    disableAfterSeconds: number
    /** Milliseconds one attempt may take. */
    timeoutMs: number
  }
  /** The audit log (docs/api/audit.md): days an event is kept. */
  audit: { retentionDays: number }
  /** `GET /metrics` (docs/operations.md, "Metrics"). */
  metrics: MetricsConfig
}

/** Who may read `GET /metrics`. */
export interface MetricsConfig {
  /**
   * The bearer token a scraper sends (METRICS_TOKEN), or undefined: then only loopback callers.
   * Not enumerable: a logged, serialised or inspected configuration leaves it out.
   */
  readonly token: string | undefined
}

/** The OpenID Connect provider this service signs users in with (docs/api/sso.md). */
export interface OidcConfig {
  issuer: string
  clientId: string
  /**
   * Not enumerable: a logged, serialised or inspected configuration leaves it out; only the
   * client authentication of src/sso reads it.
   */
  readonly clientSecret: string | undefined
  /** Space-separated, `openid` among them. */
  scopes: string
  /** The sign-in button's label. */
  name: string
  allowSignUp: boolean
  allowHttp: boolean
}

/** Thrown for a bad environment; the message names the variable and never echoes its value. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

function parseServiceKeys(raw: string): Map<string, string> {
  const keys = new Map<string, string>()
  for (const pair of raw.split(',').map((part) => part.trim()).filter(Boolean)) {
    const separator = pair.indexOf(':')
    const serviceId = pair.slice(0, separator)
    const key = pair.slice(separator + 1)
    if (separator < 1 || !/^[A-Za-z0-9_.-]{1,64}$/.test(serviceId) || key.length < 16) {
      throw new ConfigError(
        'SERVICE_KEYS: expected comma-separated "service_id:key" pairs (service_id of letters, digits, "._-"; key of at least 16 characters)',
      )
    }
    keys.set(key, serviceId)
  }
  return keys
}

function parsePreviousKeys(raw: string | undefined): Buffer[] {
  const keys = (raw ?? '').split(',').map((part) => part.trim()).filter(Boolean)
  return keys.map((value) => {
    if (!appKey.safeParse(value).success) {
      throw new ConfigError('APP_PREVIOUS_KEYS: expected comma-separated keys, each "base64:" followed by 32 bytes in base64')
    }
    return Buffer.from(value.slice('base64:'.length), 'base64')
  })
}

/**
 * The provider's settings, or null when single sign-on is off (neither OIDC_ISSUER nor
 * OIDC_CLIENT_ID set). One without the other, or an `http:` issuer without OIDC_ALLOW_HTTP, is a
 * mistake that would only show at the first sign-in, so it stops start-up instead.
 */
function oidcConfig(e: z.infer<typeof EnvSchema>): OidcConfig | null {
  if (!e.OIDC_ISSUER && !e.OIDC_CLIENT_ID) return null
  if (!e.OIDC_ISSUER) throw new ConfigError('OIDC_ISSUER: required when OIDC_CLIENT_ID is set')
  if (!e.OIDC_CLIENT_ID) throw new ConfigError('OIDC_CLIENT_ID: required when OIDC_ISSUER is set')
  if (new URL(e.OIDC_ISSUER).protocol === 'http:' && !e.OIDC_ALLOW_HTTP) {
    throw new ConfigError('OIDC_ISSUER: must be an https URL (OIDC_ALLOW_HTTP=true allows http, for development and tests)')
  }
  const oidc: OidcConfig = {
    issuer: e.OIDC_ISSUER,
    clientId: e.OIDC_CLIENT_ID,
    clientSecret: e.OIDC_CLIENT_SECRET,
    scopes: e.OIDC_SCOPES.trim().split(/\s+/).join(' '),
    name: e.OIDC_NAME,
    allowSignUp: e.OIDC_ALLOW_SIGN_UP,
    allowHttp: e.OIDC_ALLOW_HTTP,
  }
  Object.defineProperty(oidc, 'clientSecret', { enumerable: false })
  return oidc
}

/** Reads DATA_DIR/app.key, creating it with a fresh random key on the first embedded start. */
function embeddedAppKey(dataDir: string): Buffer {
  const file = path.join(dataDir, 'app.key')
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true })
    writeFileSync(file, `base64:${randomBytes(32).toString('base64')}\n`, { mode: 0o600 })
  }
  const parsed = appKey.safeParse(readFileSync(file, 'utf8').trim())
  if (!parsed.success) throw new ConfigError(`APP_KEY: ${file} does not hold a valid key`)
  return Buffer.from(parsed.data.slice('base64:'.length), 'base64')
}

/**
 * Builds the configuration from an environment (by default `process.env`).
 * @throws ConfigError naming the first bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ''))
  const parsed = EnvSchema.safeParse(cleaned)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw new ConfigError(`${String(issue.path[0])}: ${issue.message}`)
  }
  const e = parsed.data
  const dataDir = path.resolve(e.DATA_DIR)
  let key: Buffer
  if (e.APP_KEY) key = Buffer.from(e.APP_KEY.slice('base64:'.length), 'base64')
  else if (!e.DATABASE_URL) key = embeddedAppKey(dataDir)
  else throw new ConfigError('APP_KEY: required when DATABASE_URL is set, so that every process shares one key')
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    appUrl: (e.APP_URL ?? `http://${e.HOST === '0.0.0.0' ? 'localhost' : e.HOST}:${e.PORT}`).replace(/\/$/, ''),
    databaseUrl: e.DATABASE_URL,
    dataDir,
    redisUrl: e.REDIS_URL,
    appKey: key,
    previousAppKeys: parsePreviousKeys(e.APP_PREVIOUS_KEYS),
    logLevel: e.LOG_LEVEL,
    signUpEnabled: e.SIGN_UP_ENABLED,
    passwordSignIn: e.PASSWORD_SIGN_IN,
    oidc: oidcConfig(e),
    basicTokenTtlDays: e.BASIC_TOKEN_TTL_DAYS,
    serviceKeys: parseServiceKeys(e.SERVICE_KEYS),
    signIn: {
      maxPerEmail: e.SIGN_IN_MAX_PER_EMAIL,
      maxPerAddress: e.SIGN_IN_MAX_PER_ADDRESS,
      windowSeconds: e.SIGN_IN_WINDOW_SECONDS,
    },
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    uploadMaxBytes: e.UPLOAD_MAX_BYTES,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    trustProxy: e.TRUST_PROXY,
    worker: e.WORKER,
    databasePoolMax: e.DATABASE_POOL_MAX,
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    llm: {
      openai: { apiKey: e.OPENAI_API_KEY, baseUrl: e.OPENAI_BASE_URL },
      anthropic: { apiKey: e.ANTHROPIC_API_KEY, baseUrl: e.ANTHROPIC_BASE_URL },
      openaiCompatible: { apiKey: e.OPENAI_COMPATIBLE_API_KEY, baseUrl: e.OPENAI_COMPATIBLE_BASE_URL },
      ollama: { baseUrl: e.OLLAMA_BASE_URL ?? 'http://127.0.0.1:11434/v1' },
      defaultModel: e.DEFAULT_MODEL,
      embeddingModel: e.EMBEDDING_MODEL,
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxSteps: e.RUN_MAX_STEPS,
      heartbeatMs: e.RUN_HEARTBEAT_MS,
      approvalTtlSeconds: e.APPROVAL_TTL_SECONDS,
    },
    tools: {
      timeoutMs: e.TOOL_TIMEOUT_MS,
      maxResponseBytes: e.TOOL_MAX_RESPONSE_BYTES,
      allowPrivateNetwork: e.TOOL_ALLOW_PRIVATE_NETWORK,
    },
    knowledge: { crawlMaxBytes: e.KNOWLEDGE_CRAWL_MAX_BYTES, crawlTimeoutMs: e.KNOWLEDGE_CRAWL_TIMEOUT_MS },
    workflows: {
      timeoutSeconds: e.WORKFLOW_TIMEOUT_SECONDS,
      concurrency: e.WORKFLOW_CONCURRENCY,
      heartbeatMs: e.WORKFLOW_HEARTBEAT_MS,
      webhookBodyLimitBytes: e.WEBHOOK_BODY_LIMIT_BYTES,
    },
    webhooks: {
      allowPrivateNetwork: e.WEBHOOK_ALLOW_PRIVATE_NETWORK,
      retryDelays: e.WEBHOOK_RETRY_DELAYS,
      disableAfterSeconds: e.WEBHOOK_DISABLE_AFTER_SECONDS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    audit: { retentionDays: e.AUDIT_RETENTION_DAYS },
    tracing: tracingConfig(e),
    metrics: Object.defineProperty({} as MetricsConfig, 'token', { value: e.METRICS_TOKEN, enumerable: false }),
  }
}

/** The tracing configuration, or null when no OTLP endpoint is set or tracing is switched off. */
function tracingConfig(e: z.infer<typeof EnvSchema>): TracingConfig | null {
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT
  const url = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base ? `${base.replace(/\/$/, '')}/v1/traces` : undefined)
  if (!url || e.OTEL_SDK_DISABLED || e.OTEL_TRACES_EXPORTER === 'none') return null
  return {
    url,
    protocol: e.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? e.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    sampler: e.OTEL_TRACES_SAMPLER,
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
    captureMessageContent: e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    batch: { scheduleDelayMs: e.OTEL_BSP_SCHEDULE_DELAY, maxQueueSize: e.OTEL_BSP_MAX_QUEUE_SIZE, exportTimeoutMs: e.OTEL_BSP_EXPORT_TIMEOUT },
  }
}

/** Loads `.env` from the working directory when present; variables already set win. */
export function loadDotEnv(file = '.env'): void {
  if (existsSync(file)) process.loadEnvFile(file)
}
