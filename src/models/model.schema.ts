/**
 * Large language model wire shapes (docs/api/resources.md, "Large language models")
 * and the row -> wire mapper. The specification leaves the fields of LargeLanguageModel open;
 * these are the docs/api/resources.md ("Large language models").
 */
import { z } from 'zod'
import { queryBoolean } from '../access/resource.schema.ts'
import { iso, jsonBoolean, jsonInt, name, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'

/** A uuid's shape: refused as a slug, since `{model}` takes either. */
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A model slug: lower-case letters and digits in runs joined by single `.`, `-` or `_` (`gpt-4.1-mini`, `llama3.2`). */
export const ModelSlug = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[a-z0-9]+(?:[._-][a-z0-9]+)*$/, 'lower-case letters and digits joined by single ".", "-" or "_"')
  .refine((value) => !UUID_SHAPE.test(value), 'must not have the shape of a uuid')

/** `{model}` of the retrieve path: a model's uuid or its slug. */
export const ModelRef = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[A-Za-z0-9]+(?:[._-][A-Za-z0-9]+)*$/, 'a model uuid or slug')
  .meta({ description: 'A model uuid or slug (`gpt-4o-mini`).' })

/** Largest `context_window` and `max_output_tokens`. */
export const MODEL_TOKENS_MAX = 100_000_000
/** Largest price per million tokens, in US dollars (the column is numeric(12,6)). */
export const MODEL_PRICE_MAX = 100_000

/** A JSON number within [0, MODEL_PRICE_MAX] with at most 6 decimal places; a pipe, so strings are refused. */
const Price = z.number().pipe(
  z
    .number()
    .min(0)
    .max(MODEL_PRICE_MAX)
    .refine((value) => Number(value.toFixed(6)) === value, 'at most 6 decimal places'),
)

/** What a model can do; every member optional on input (default false on create, kept on update). */
const CapabilitiesInput = z.strictObject({
  tools: jsonBoolean().optional(),
  vision: jsonBoolean().optional(),
  json_output: jsonBoolean().optional(),
})

/** `POST /api/v1/large-language-models` body (plus the workspace context's `workspace_uuid`). */
export const CreateModelInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  provider_uuid: z.uuid(),
  slug: ModelSlug,
  name: name(),
  description: text(2000).nullable().optional(),
  model_id: text(255, 1).refine((value) => value.trim().length > 0, 'must not be blank'),
  context_window: jsonInt(1, MODEL_TOKENS_MAX),
  max_output_tokens: jsonInt(1, MODEL_TOKENS_MAX),
  input_price_per_million: Price.optional(),
  output_price_per_million: Price.optional(),
  capabilities: CapabilitiesInput.optional(),
})
export type TCreateModelInput = z.infer<typeof CreateModelInput>

/**
 * `PUT /api/v1/large-language-models/{model_uuid}`: the create fields, all optional. Omitted
 * fields are kept, `description: null` clears it, `capabilities` members are merged one by one.
 */
export const UpdateModelInput = z.strictObject({ model_uuid: z.uuid(), ...CreateModelInput.partial().shape })
export type TUpdateModelInput = z.infer<typeof UpdateModelInput>

/** `GET /api/v1/large-language-models/{model}` (a uuid or a slug). */
export const ModelRefInput = z.strictObject({ model: ModelRef, workspace_uuid: z.uuid().optional() })

/** Path of delete (plus the workspace context). */
export const ModelPathInput = z.strictObject({ model_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** Sortable columns of the model list. */
export const MODEL_SORTS = [
  'name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at', 'context_window', '-context_window',
  'input_price_per_million', '-input_price_per_million', 'output_price_per_million', '-output_price_per_million',
] as const

/** `GET /api/v1/large-language-models` query. */
export const ModelListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(MODEL_SORTS, 'name'),
  /** Provider slug (`openai`). */
  provider: text(80).optional(),
  /** Name or slug, case-insensitive. */
  search: text(255).optional(),
  /** `true`: only models with a usable credential for the caller here; `false`: only those without. */
  is_available: queryBoolean().optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TModelListInput = z.infer<typeof ModelListInput>

/** The provider a model belongs to, as embedded. */
export const ModelProvider = z.object({ uuid: z.uuid(), slug: z.string(), name: z.string() })

/** A large language model as answered. */
export const LargeLanguageModel = z
  .object({
    uuid: z.uuid(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    provider: ModelProvider,
    model_id: z.string(),
    context_window: z.number().int(),
    max_output_tokens: z.number().int(),
    input_price_per_million: z.number(),
    output_price_per_million: z.number(),
    capabilities: z.object({ tools: z.boolean(), vision: z.boolean(), json_output: z.boolean() }),
    is_builtin: z.boolean(),
    is_available: z.boolean(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'LargeLanguageModel' })
export type TLargeLanguageModel = z.infer<typeof LargeLanguageModel>

/** A catalog row as raw SQL reads it (see MODEL_COLUMNS in src/models/models.service.ts). */
export interface ModelRow {
  id: number
  uuid: string
  slug: string
  name: string
  description: string
  modelId: string
  contextWindow: number
  maxOutputTokens: number
  /** numeric: text from the pg driver. */
  inputPricePerMillion: number | string
  outputPricePerMillion: number | string
  supportsTools: boolean
  supportsVision: boolean
  supportsJsonOutput: boolean
  isBuiltin: boolean
  isAvailable: boolean
  providerUuid: string
  providerSlug: string
  providerName: string
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire. */
export function toLargeLanguageModel(row: ModelRow): TLargeLanguageModel {
  return {
    uuid: row.uuid,
    slug: row.slug,
    name: row.name,
    description: row.description,
    provider: { uuid: row.providerUuid, slug: row.providerSlug, name: row.providerName },
    model_id: row.modelId,
    context_window: Number(row.contextWindow),
    max_output_tokens: Number(row.maxOutputTokens),
    input_price_per_million: Number(row.inputPricePerMillion),
    output_price_per_million: Number(row.outputPricePerMillion),
    capabilities: { tools: Boolean(row.supportsTools), vision: Boolean(row.supportsVision), json_output: Boolean(row.supportsJsonOutput) },
    is_builtin: Boolean(row.isBuiltin),
    is_available: Boolean(row.isAvailable),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}
