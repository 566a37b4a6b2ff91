/**
 * Provider wire shapes (docs/api/resources.md, "Providers": a service an LLM or a tool talks to) and
 * the row -> wire mapper, plus the string-valued `metadata` and http(s) URL pieces that accounts
 * share.
 */
import { z } from 'zod'
import {
  AUTH_SCHEMES,
  PROVIDER_DRIVERS,
  PROVIDER_TYPES,
  VISIBILITIES,
  type AuthScheme,
  type ProviderDriver,
  type ProviderType,
  type Visibility as TVisibility,
} from '../../entities/index.ts'
import { checkMetadata, Visibility } from '../access/resource.schema.ts'
import { iso, name, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'
import { Slug } from '../access/user-workspace.schema.ts'

/** Sortable columns of the provider list. */
export const PROVIDER_SORTS = ['name', '-name', 'created_at', '-created_at', 'updated_at', '-updated_at'] as const

/** Drivers a custom provider may use, by type (`local` is the built-in test model only). */
export const CUSTOM_DRIVERS = {
  llm: ['openai', 'anthropic', 'openai-compatible', 'ollama'],
  tool: ['http'],
} as const satisfies Record<ProviderType, readonly ProviderDriver[]>

/** Every driver a custom provider may name. */
const CUSTOM_DRIVER_VALUES = ['openai', 'anthropic', 'openai-compatible', 'ollama', 'http'] as const

/** The default driver of a custom provider of each type, when `driver` is omitted. */
export const DEFAULT_DRIVER: Record<ProviderType, ProviderDriver> = { llm: 'openai-compatible', tool: 'http' }

/** Auth schemes that need `auth_parameter` (the header or query parameter name). */
export const PARAMETER_SCHEMES: readonly AuthScheme[] = ['header', 'query']

/** Largest string-valued `metadata`, serialized as JSON, in bytes (64 KiB). */
export const STRING_METADATA_MAX_BYTES = 64 * 1024

/** `metadata` of providers and accounts on create: string values under 1..64-character keys, <= 64 KiB. */
export const StringMetadataInput = z.record(z.string(), text(10_000)).superRefine(checkMetadata([], STRING_METADATA_MAX_BYTES, false))
/** The same on update: merged key by key, `null` removes a key. */
export const StringMetadataPatch = z.record(z.string(), text(10_000).nullable()).superRefine(checkMetadata([], STRING_METADATA_MAX_BYTES, true))
/** String-valued `metadata` as answered. */
export const StringMetadata = z.record(z.string(), z.string())

/** Whether `value` parses as an absolute http or https URL with a host. */
function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false
  const url = new URL(value)
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
}

/** An absolute http(s) URL of at most 2048 characters (`base_url`). */
export const HttpUrl = text(2048, 1).refine(isHttpUrl, 'must be an absolute http or https URL').meta({ format: 'uri' })

/** Header or query parameter name for the `header` / `query` auth schemes (an HTTP token). */
const AuthParameter = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'letters, digits and !#$%&\'*+.^_`|~- only')

/** Create body (plus the workspace context's `workspace_uuid`). */
export const CreateProviderInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(),
  slug: Slug.optional(),
  description: text(2000).nullable().optional(),
  type: z.enum(PROVIDER_TYPES),
  driver: z.enum(CUSTOM_DRIVER_VALUES).optional(),
  base_url: HttpUrl,
  auth_scheme: z.enum(AUTH_SCHEMES).optional(),
  auth_parameter: AuthParameter.nullable().optional(),
  visibility: Visibility.optional(),
  metadata: StringMetadataInput.optional(),
})
export type TCreateProviderInput = z.infer<typeof CreateProviderInput>

/**
 * `PUT /api/v1/providers/{provider_uuid}`: the create fields but `type` (fixed at creation), all
 * optional, `metadata` as a patch. Omitted fields are kept, `null` clears `description` and
 * `auth_parameter`, `metadata` merges key by key.
 */
export const UpdateProviderInput = z.strictObject({
  provider_uuid: z.uuid(),
  ...CreateProviderInput.omit({ type: true }).partial().shape,
  metadata: StringMetadataPatch.optional(),
})
export type TUpdateProviderInput = z.infer<typeof UpdateProviderInput>

/** Path of retrieve and delete (plus the workspace context). */
export const ProviderPathInput = z.strictObject({ provider_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** List query. */
export const ProviderListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(PROVIDER_SORTS, 'name'),
  type: z.enum(PROVIDER_TYPES).optional(),
  search: text(255).optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TProviderListInput = z.infer<typeof ProviderListInput>

/** A provider as answered. */
export const Provider = z
  .object({
    uuid: z.uuid(),
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    type: z.enum(PROVIDER_TYPES),
    driver: z.enum(PROVIDER_DRIVERS),
    base_url: z.string().nullable(),
    auth_scheme: z.enum(AUTH_SCHEMES),
    auth_parameter: z.string().nullable(),
    is_builtin: z.boolean(),
    visibility: z.enum(VISIBILITIES),
    is_owner: z.boolean(),
    metadata: StringMetadata,
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Provider' })
export type TProvider = z.infer<typeof Provider>

/** Columns of `providers` a mapper reads (see `selectColumns` in src/platform/sql.ts). */
export const PROVIDER_FIELDS = [
  'id', 'uuid', 'slug', 'name', 'description', 'type', 'driver', 'baseUrl', 'authScheme', 'authParameter', 'isBuiltin',
  'visibility', 'metadata', 'userId', 'workspaceId', 'createdAt', 'updatedAt',
] as const

/** A `providers` row as raw SQL reads it with {@link PROVIDER_FIELDS}. */
export interface ProviderRow {
  id: number
  uuid: string
  slug: string
  name: string
  description: string
  type: ProviderType
  driver: ProviderDriver
  baseUrl: string | null
  authScheme: AuthScheme
  authParameter: string | null
  isBuiltin: boolean
  visibility: TVisibility
  metadata: Record<string, string>
  userId: number | null
  workspaceId: number | null
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire. */
export function toProvider(row: ProviderRow, viewerId: number): TProvider {
  return {
    uuid: row.uuid,
    slug: row.slug,
    name: row.name,
    description: row.description,
    type: row.type,
    driver: row.driver,
    base_url: row.baseUrl,
    auth_scheme: row.authScheme,
    auth_parameter: row.authParameter,
    is_builtin: row.isBuiltin,
    visibility: row.visibility,
    is_owner: row.userId !== null && row.userId === viewerId,
    metadata: row.metadata,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}
