/**
 * The model catalog and provider registry: which large language models a
 * workspace can see, which credential each would use, and the AI SDK model built from them.
 *
 * Visibility: built-in models (no workspace) and the custom models of the workspace, not deleted,
 * whose provider is not deleted.
 *
 * Credentials, first usable wins:
 * 1. the caller's own account for the model's provider in the workspace (newest first);
 * 2. a `workspace`-visible account of that provider in the workspace (newest first);
 * 3. the server's environment (`config.llm`: OPENAI_API_KEY, ...), for built-in providers only,
 *    so the server's key never goes to a URL a user configured.
 * `local` needs nothing; `ollama` needs no key; `openai-compatible` is usable once a base URL is
 * known, its key is optional. `openai` and `anthropic` accounts are usable when they hold a
 * secret; `openai-compatible` and `ollama` ones when a base URL is known (theirs or a fallback).
 *
 * Base URL: the account's `base_url`, else the environment's for the driver (built-in providers),
 * else the provider's `base_url`.
 *
 * Every model is built with the AI SDK: nothing here speaks a provider's wire format. No message
 * or error of this module carries a secret.
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { EmbeddingModel, LanguageModel, Tool } from 'ai'
import type { ProviderDriver } from '../../entities/index.ts'
import type { Config } from '../platform/config.ts'
import type { Em } from '../platform/db.ts'
import { ValidationError, type FieldPath } from '../platform/errors.ts'
import { revealAccountSecret } from '../platform/account-secrets.ts'
import { createLocalModel, LOCAL_MODEL_ID } from './local-model.ts'
import type { SqlFragment } from '../platform/sql.ts'
import { isRecord, jsonValueOf } from '../access/wire.ts'

/** A catalog entry as the run code needs it (prices in US dollars per million tokens). */
export interface CatalogModel {
  id: number
  uuid: string
  slug: string
  name: string
  modelId: string
  contextWindow: number
  maxOutputTokens: number
  inputPricePerMillion: number
  outputPricePerMillion: number
  supportsTools: boolean
  supportsVision: boolean
  supportsJsonOutput: boolean
}

/** A model ready to call: its catalog entry, where its credential came from, and the AI SDK model. */
export interface ResolvedModel {
  llm: CatalogModel
  providerSlug: string
  driver: ProviderDriver
  /**
   * Which credential the model uses: an account of the caller (`user`), a workspace-visible
   * account (`workspace`), the server's key (`environment`), or no key at all (`none`: the
   * local model, or a key-less Ollama / OpenAI-compatible server).
   */
  credential: 'user' | 'workspace' | 'environment' | 'none'
  model: LanguageModel
  /**
   * The knowledge embedding model (`config.llm.embeddingModel`) on the same provider with the same
   * credential, built on first call; null for a provider without an embeddings API (Anthropic,
   * the local model): knowledge retrieval is then full-text only (docs/api/knowledge.md).
   */
  embedding: () => KnowledgeEmbedding | null
  /**
   * The provider's own web search for this model with the same credential, built on first call;
   * null for a provider that offers none through the AI SDK (docs/api/runs.md, "Web search").
   */
  webSearch: () => WebSearchOffer | null
}

/** The function name a provider's web search is offered under. */
export const WEB_SEARCH_TOOL = 'web_search'

/**
 * A provider's web search tool, executed by the provider itself, and the model to call with it
 * (OpenAI's needs the Responses API, so the model differs from the run's usual one).
 */
export interface WebSearchOffer {
  /** The key the tool is offered under; no other tool of the run may take it. */
  name: typeof WEB_SEARCH_TOOL
  model: LanguageModel
  tool: Tool
}

/** An embedding model, and the key that says which vector space its vectors are in. */
export interface KnowledgeEmbedding {
  model: EmbeddingModel
  /** `<provider slug>/<model id>`: vectors of different keys are never compared. */
  key: string
}

/** What resolving a model needs. */
export interface ModelDeps {
  em: Em
  config: Config
}

/** The slug of the built-in offline test model (provider `local`). */
export const LOCAL_MODEL_SLUG = LOCAL_MODEL_ID

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
/**
 * What a slug or uuid can look like (src/models/model.schema.ts); anything else names no model
 * and is refused before it reaches SQL (PostgreSQL refuses NUL characters in text parameters).
 */
const MODEL_REF = /^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$/

/** Catalog columns as a {@link CatalogModel} plus the provider's, over `large_language_models m join providers pv`. */
const MODEL_COLUMNS = `m.id::float8 as id, m.uuid, m.slug, m.name, m.model_id as "modelId", m.context_window as "contextWindow",
  m.max_output_tokens as "maxOutputTokens", m.input_price_per_million::float8 as "inputPricePerMillion",
  m.output_price_per_million::float8 as "outputPricePerMillion", m.supports_tools as "supportsTools",
  m.supports_vision as "supportsVision", m.supports_json_output as "supportsJsonOutput",
  pv.id::float8 as "providerId", pv.slug as "providerSlug", pv.name as "providerName", pv.driver, pv.base_url as "providerBaseUrl",
  pv.is_builtin as "providerBuiltin"`

/**
 * The models a workspace sees (`m` over `large_language_models`, `pv` its provider): built-ins
 * and the workspace's custom models, both alive, with a live provider.
 */
export function visibleModelSql(modelAlias: string, providerAlias: string, workspaceId: number): SqlFragment {
  return {
    sql: `(${modelAlias}.deleted_at is null and ${providerAlias}.deleted_at is null
      and (${modelAlias}.workspace_id is null or ${modelAlias}.workspace_id = ?))`,
    params: [workspaceId],
  }
}

/** The provider side of a catalog row. */
interface ProviderInfo {
  providerId: number
  providerSlug: string
  providerName: string
  driver: ProviderDriver
  providerBaseUrl: string | null
  providerBuiltin: boolean
}

type ModelRow = CatalogModel & ProviderInfo

/** An account that could serve as the credential, in the order of preference. */
interface AccountCandidate {
  id: number
  own: boolean
  baseUrl: string | null
  hasSecret: boolean
}

/** The server's settings for a built-in provider's driver; nothing for custom providers. */
function environmentOf(config: Config, provider: Pick<ProviderInfo, 'driver' | 'providerBuiltin'>): { apiKey?: string; baseUrl?: string } {
  if (!provider.providerBuiltin) return {}
  switch (provider.driver) {
    case 'openai':
      return config.llm.openai
    case 'anthropic':
      return config.llm.anthropic
    case 'openai-compatible':
      return config.llm.openaiCompatible
    case 'ollama':
      return { baseUrl: config.llm.ollama.baseUrl }
    default:
      return {}
  }
}

/** Drivers whose accounts must hold a secret (an API key) to be usable. */
const KEYED_DRIVERS: readonly ProviderDriver[] = ['openai', 'anthropic']
/** Drivers that speak the OpenAI chat completions API with an optional key. */
const KEYLESS_DRIVERS: readonly ProviderDriver[] = ['openai-compatible', 'ollama']

/** How a model would be called: which account (if any), which key source, which base URL. */
interface CallPlan {
  credential: ResolvedModel['credential']
  accountId: number | null
  /** The environment's key, when that is the credential. */
  environmentKey?: string
  baseUrl: string | undefined
}

/** The first usable credential for a provider, or null when there is none (see the module comment). */
function planCall(config: Config, provider: ProviderInfo, accounts: AccountCandidate[]): CallPlan | null {
  const env = environmentOf(config, provider)
  if (provider.driver === 'local') return { credential: 'none', accountId: null, baseUrl: undefined }
  if (KEYED_DRIVERS.includes(provider.driver)) {
    const fallbackUrl = env.baseUrl ?? provider.providerBaseUrl ?? undefined
    const account = accounts.find((candidate) => candidate.hasSecret)
    if (account) {
      return { credential: account.own ? 'user' : 'workspace', accountId: account.id, baseUrl: account.baseUrl ?? fallbackUrl }
    }
    if (env.apiKey) return { credential: 'environment', accountId: null, environmentKey: env.apiKey, baseUrl: fallbackUrl }
    return null
  }
  if (KEYLESS_DRIVERS.includes(provider.driver)) {
    const fallbackUrl = env.baseUrl ?? provider.providerBaseUrl ?? undefined
    const account = accounts.find((candidate) => candidate.baseUrl !== null || fallbackUrl !== undefined)
    if (account) {
      return { credential: account.own ? 'user' : 'workspace', accountId: account.id, baseUrl: account.baseUrl ?? fallbackUrl }
    }
    if (fallbackUrl === undefined) return null
    return env.apiKey
      ? { credential: 'environment', accountId: null, environmentKey: env.apiKey, baseUrl: fallbackUrl }
      : { credential: 'none', accountId: null, baseUrl: fallbackUrl }
  }
  return null
}

/**
 * SQL that is true for the models (`m`, provider `pv`) that have a usable credential for
 * `userId` in `workspaceId`: the same rules as {@link resolveModel}, evaluated in the database
 * so a list can filter and count by it. The environment's part depends only on the
 * configuration and is written into the text as `true`/`false`.
 */
export function availabilitySql(
  providerAlias: string,
  config: Config,
  viewer: { workspaceId: number; userId: number },
): SqlFragment {
  const pv = providerAlias
  const env = (driver: ProviderDriver, key: 'apiKey' | 'baseUrl') => (environmentOf(config, { driver, providerBuiltin: true })[key] ? 'true' : 'false')
  return {
    sql: `(${pv}.driver = 'local'
      or (${pv}.driver = 'openai' and ${pv}.is_builtin and ${env('openai', 'apiKey')})
      or (${pv}.driver = 'anthropic' and ${pv}.is_builtin and ${env('anthropic', 'apiKey')})
      or (${pv}.driver = 'openai-compatible' and ((${pv}.is_builtin and ${env('openai-compatible', 'baseUrl')}) or ${pv}.base_url is not null))
      or (${pv}.driver = 'ollama' and ((${pv}.is_builtin and ${env('ollama', 'baseUrl')}) or ${pv}.base_url is not null))
      or (${pv}.driver in ('openai', 'anthropic', 'openai-compatible', 'ollama') and exists (
        select 1 from accounts ma where ma.provider_id = ${pv}.id and ma.workspace_id = ? and ma.deleted_at is null
          and (ma.user_id = ? or ma.visibility = 'workspace')
          and (case when ${pv}.driver in ('openai', 'anthropic') then ma.secret_key_id is not null else ma.base_url is not null end))))`,
    params: [viewer.workspaceId, viewer.userId],
  }
}

/**
 * Which of the models `modelIds` (catalog ids) have a usable credential for `userId` in
 * `workspaceId`: one query, whatever their number. Models the workspace cannot see are left out.
 */
export async function availableModelIds(deps: ModelDeps, o: { workspaceId: number; userId: number; modelIds: number[] }): Promise<Set<number>> {
  if (!o.modelIds.length) return new Set()
  const visible = visibleModelSql('m', 'pv', o.workspaceId)
  const available = availabilitySql('pv', deps.config, o)
  const rows = await deps.em.execute(
    `select m.id::float8 as id from large_language_models m join providers pv on pv.id = m.provider_id
     where m.id = any(?::bigint[]) and ${visible.sql} and ${available.sql}`,
    [`{${o.modelIds.map((id) => Math.trunc(id)).join(',')}}`, ...visible.params, ...available.params],
  )
  return new Set(rows.map((row) => Number(row.id)))
}

/** A catalog row with the accounts of its provider that may serve the viewer, as {@link findModel} answers it. */
type FoundModel = ModelRow & { accounts: AccountCandidate[] }

/**
 * The statement of a model lookup: the visible model matching `where` (over `m`, provider `pv`),
 * the workspace's own model winning over a built-in of the same slug, as {@link MODEL_COLUMNS}
 * plus `accounts`, the accounts of its provider that may serve `userId` in `workspaceId` (own
 * first, then workspace-visible, newest first).
 */
function modelLookupSql(where: SqlFragment, viewer: { workspaceId: number; userId: number }): SqlFragment {
  const visible = visibleModelSql('m', 'pv', viewer.workspaceId)
  return {
    sql: `select ${MODEL_COLUMNS},
       (select coalesce(json_agg(json_build_object('id', a.id, 'own', a.user_id = ?, 'baseUrl', a.base_url, 'hasSecret', a.secret_key_id is not null)
          order by (a.user_id = ?) desc, a.created_at desc, a.id desc), '[]')
        from accounts a where a.provider_id = pv.id and a.workspace_id = ? and a.deleted_at is null and (a.user_id = ? or a.visibility = 'workspace')
       ) as accounts
     from large_language_models m join providers pv on pv.id = m.provider_id
     where ${where.sql} and ${visible.sql}
     order by m.workspace_id is null, m.id limit 1`,
    params: [viewer.userId, viewer.userId, viewer.workspaceId, viewer.userId, ...where.params, ...visible.params],
  }
}

/** A visible model by slug (or uuid) with its account candidates (see {@link modelLookupSql}): one statement. */
async function findModel(deps: ModelDeps, o: { workspaceId: number; userId: number; slug: string }): Promise<FoundModel | null> {
  if (!isModelRef(o.slug)) return null
  const byUuid = UUID.test(o.slug)
  const lookup = modelLookupSql({ sql: byUuid ? 'm.uuid = ?' : 'm.slug = ?', params: [byUuid ? o.slug.toLowerCase() : o.slug] }, o)
  const [row] = await deps.em.execute(lookup.sql, lookup.params)
  return foundModelOf(row)
}

/** Whether `ref` can name a model at all (length and {@link MODEL_REF}); anything else names none. */
const isModelRef = (ref: string) => ref.length <= 120 && MODEL_REF.test(ref)

/**
 * A JSON value for the select list of another statement (the agent's, src/runs/runs.service.ts):
 * the model whose slug is the text expression `slug` (by slug only, never by uuid), as
 * {@link findModel} would find it, or null. Its value goes to {@link resolveReadModel}.
 */
export function modelBySlugSql(slug: SqlFragment, viewer: { workspaceId: number; userId: number }): SqlFragment {
  const lookup = modelLookupSql({ sql: `m.slug = ${slug.sql}`, params: slug.params }, viewer)
  return { sql: `(select row_to_json(found) from (${lookup.sql}) found)`, params: lookup.params }
}

/** A lookup's row (a statement's row, or the JSON object of {@link modelBySlugSql}) as a {@link FoundModel}; null for none. */
function foundModelOf(value: unknown): FoundModel | null {
  const row = jsonValueOf(value)
  if (!isRecord(row)) return null
  const accounts = jsonValueOf(row.accounts)
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    slug: String(row.slug),
    name: String(row.name),
    modelId: String(row.modelId),
    contextWindow: Number(row.contextWindow),
    maxOutputTokens: Number(row.maxOutputTokens),
    inputPricePerMillion: Number(row.inputPricePerMillion),
    outputPricePerMillion: Number(row.outputPricePerMillion),
    supportsTools: Boolean(row.supportsTools),
    supportsVision: Boolean(row.supportsVision),
    supportsJsonOutput: Boolean(row.supportsJsonOutput),
    providerId: Number(row.providerId),
    providerSlug: String(row.providerSlug),
    providerName: String(row.providerName),
    driver: row.driver as ProviderDriver,
    providerBaseUrl: row.providerBaseUrl === null || row.providerBaseUrl === undefined ? null : String(row.providerBaseUrl),
    providerBuiltin: Boolean(row.providerBuiltin),
    accounts: (Array.isArray(accounts) ? accounts.filter(isRecord) : []).map((account) => ({
      id: Number(account.id),
      own: account.own === true,
      baseUrl: typeof account.baseUrl === 'string' ? account.baseUrl : null,
      hasSecret: account.hasSecret === true,
    })),
  }
}

/**
 * Official endpoints, used when neither account nor provider names one. Passed explicitly: left
 * undefined, the SDK would read OPENAI_BASE_URL / ANTHROPIC_BASE_URL from process.env itself.
 */
const OFFICIAL_BASE_URL = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com/v1' } as const

/**
 * The embedding model `modelId` of a driver with an embeddings API; null for the others. Keys are
 * passed as {@link buildModel} passes them.
 */
function buildEmbedding(row: ModelRow, baseUrl: string | undefined, apiKey: string | undefined, modelId: string): KnowledgeEmbedding | null {
  const key = `${row.providerSlug}/${modelId}`
  switch (row.driver) {
    case 'openai':
      return { key, model: createOpenAI({ apiKey: apiKey ?? '', baseURL: baseUrl ?? OFFICIAL_BASE_URL.openai }).embedding(modelId) }
    case 'openai-compatible':
    case 'ollama':
      return { key, model: createOpenAICompatible({ name: row.providerSlug, baseURL: baseUrl ?? '', apiKey }).embeddingModel(modelId) }
    default:
      return null
  }
}

/**
 * The web search a driver's provider executes itself, through the AI SDK: OpenAI's `web_search`
 * over the Responses API (`/responses` at the same base URL), Anthropic's `web_search` server
 * tool on the usual model. Other drivers (OpenAI-compatible servers, Ollama, the local model)
 * have none. Keys are passed as {@link buildModel} passes them.
 */
function buildWebSearch(row: ModelRow, baseUrl: string | undefined, apiKey: string | undefined): WebSearchOffer | null {
  switch (row.driver) {
    case 'openai': {
      const openai = createOpenAI({ apiKey: apiKey ?? '', baseURL: baseUrl ?? OFFICIAL_BASE_URL.openai })
      return { name: WEB_SEARCH_TOOL, model: openai.responses(row.modelId), tool: openai.tools.webSearch({}) }
    }
    case 'anthropic': {
      const anthropic = createAnthropic({ apiKey: apiKey ?? '', baseURL: baseUrl ?? OFFICIAL_BASE_URL.anthropic })
      return { name: WEB_SEARCH_TOOL, model: anthropic.languageModel(row.modelId), tool: anthropic.tools.webSearch_20250305({}) }
    }
    default:
      return null
  }
}

/** The AI SDK model of a driver. Keys are always passed (never undefined), so the SDK never reads process.env. */
function buildModel(row: ModelRow, baseUrl: string | undefined, apiKey: string | undefined): LanguageModel {
  switch (row.driver) {
    case 'local':
      return createLocalModel(row.modelId)
    case 'openai':
      // Chat completions, so any OpenAI-compatible server behind an account's base_url works too.
      return createOpenAI({ apiKey: apiKey ?? '', baseURL: baseUrl ?? OFFICIAL_BASE_URL.openai }).chat(row.modelId)
    case 'anthropic':
      return createAnthropic({ apiKey: apiKey ?? '', baseURL: baseUrl ?? OFFICIAL_BASE_URL.anthropic }).languageModel(
        row.modelId,
      )
    default:
      return createOpenAICompatible({ name: row.providerSlug, baseURL: baseUrl ?? '', apiKey, includeUsage: true }).chatModel(row.modelId)
  }
}

function catalogOf(row: ModelRow): CatalogModel {
  return {
    id: row.id,
    uuid: row.uuid,
    slug: row.slug,
    name: row.name,
    modelId: row.modelId,
    contextWindow: row.contextWindow,
    maxOutputTokens: row.maxOutputTokens,
    inputPricePerMillion: row.inputPricePerMillion,
    outputPricePerMillion: row.outputPricePerMillion,
    supportsTools: row.supportsTools,
    supportsVision: row.supportsVision,
    supportsJsonOutput: row.supportsJsonOutput,
  }
}

/** Resolves a named model (slug or uuid). @throws ValidationError naming `field`. */
async function resolveNamed(deps: ModelDeps, o: { workspaceId: number; userId: number; slug: string; field: FieldPath }): Promise<ResolvedModel> {
  return resolveFound(deps, await findModel(deps, o), o.field)
}

/** A found model (null: none) with its credential and AI SDK model. @throws ValidationError naming `field`. */
async function resolveFound(deps: ModelDeps, row: FoundModel | null, field: FieldPath): Promise<ResolvedModel> {
  if (!row) throw new ValidationError(field, 'Unknown large language model')
  const accounts = row.driver === 'local' ? [] : row.accounts
  const noCredential = () =>
    new ValidationError(field, `${row.name} has no credential in this workspace: add an account for ${row.providerName} or set the server key`)
  const plan = planCall(deps.config, row, accounts)
  if (!plan) throw noCredential()
  const apiKey = plan.accountId === null ? plan.environmentKey : ((await revealAccountSecret(deps.em, plan.accountId, deps.config)) ?? undefined)
  // The account's secret was removed since it was chosen: never let the SDK fall back to process.env.
  if (KEYED_DRIVERS.includes(row.driver) && !apiKey) throw noCredential()
  return {
    llm: catalogOf(row),
    providerSlug: row.providerSlug,
    driver: row.driver,
    credential: plan.credential,
    model: buildModel(row, plan.baseUrl, apiKey),
    embedding: once(() => buildEmbedding(row, plan.baseUrl, apiKey, deps.config.llm.embeddingModel)),
    webSearch: once(() => buildWebSearch(row, plan.baseUrl, apiKey)),
  }
}

/**
 * The model `slug` names (a catalog slug, or a model uuid) for `userId` working in
 * `workspaceId`, with its credential (user > workspace > environment) and an AI SDK model.
 * `slug` null = the default: `config.llm.defaultModel` when it is visible and has a usable
 * credential, else `local-test-model`.
 * @throws ValidationError naming `field`: `Unknown large language model` (unknown, deleted or
 *   another workspace's), or `<name> has no credential in this workspace: ...`.
 */
export async function resolveModel(
  deps: ModelDeps,
  o: { workspaceId: number; userId: number; slug: string | null; field: FieldPath },
): Promise<ResolvedModel> {
  if (o.slug !== null) return resolveNamed(deps, { ...o, slug: o.slug })
  try {
    return await resolveNamed(deps, { ...o, slug: deps.config.llm.defaultModel })
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    return resolveNamed(deps, { ...o, slug: LOCAL_MODEL_SLUG })
  }
}

/**
 * {@link resolveModel} with the model already read by the caller's own statement through
 * {@link modelBySlugSql}, for the slug `slug ?? config.llm.defaultModel`: `read` is what that
 * column held. A `slug` that is a uuid (or names no model at all) was not looked up that way, so
 * it is resolved as {@link resolveModel} does, as is the fallback of an unusable default.
 * @throws as {@link resolveModel}.
 */
export async function resolveReadModel(
  deps: ModelDeps,
  o: { workspaceId: number; userId: number; slug: string | null; field: FieldPath },
  read: unknown,
): Promise<ResolvedModel> {
  const slug = o.slug ?? deps.config.llm.defaultModel
  if (!isModelRef(slug) || UUID.test(slug)) return resolveModel(deps, o)
  if (o.slug !== null) return resolveFound(deps, foundModelOf(read), o.field)
  try {
    return await resolveFound(deps, foundModelOf(read), o.field)
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error
    return resolveNamed(deps, { ...o, slug: LOCAL_MODEL_SLUG })
  }
}

/** `make`, called at most once. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined
  return () => (made ??= { value: make() }).value
}

/** The cost of a call in US dollars, rounded to 6 decimals. */
export function costOf(llm: CatalogModel, usage: { promptTokens: number; completionTokens: number }): number {
  const dollars = (usage.promptTokens * llm.inputPricePerMillion + usage.completionTokens * llm.outputPricePerMillion) / 1_000_000
  return Math.round(dollars * 1_000_000) / 1_000_000
}
