import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, softDelete, timestamps, VISIBILITIES, workspaceSlugUnique } from './columns.ts'
import { optionalOwnership } from './ownership.ts'

/** What a provider serves: language models or tool calls (docs/api/resources.md). */
export const PROVIDER_TYPES = ['llm', 'tool'] as const
export type ProviderType = (typeof PROVIDER_TYPES)[number]

/**
 * How the service talks to a provider: an AI SDK adapter for `llm` providers, plain HTTP for
 * `tool` providers. `local` is the built-in offline test model.
 */
export const PROVIDER_DRIVERS = ['openai', 'anthropic', 'openai-compatible', 'ollama', 'local', 'http'] as const
export type ProviderDriver = (typeof PROVIDER_DRIVERS)[number]

/** Where an account's secret goes on an outgoing request. */
export const AUTH_SCHEMES = ['bearer', 'header', 'query', 'basic', 'none'] as const
export type AuthScheme = (typeof AUTH_SCHEMES)[number]

/**
 * A service that an LLM or a tool talks to (`providers`). Built-in providers (openai,
 * anthropic, openai-compatible, ollama, local) are seeded by a migration with no owner and no
 * workspace and are visible to everyone; custom ones belong to a workspace like any resource.
 */
export const Provider = defineEntity({
  name: 'Provider',
  tableName: 'providers',
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  uniques: [workspaceSlugUnique('providers')],
  properties: {
    ...resourceKeys(),
    slug: p.string().length(80),
    name: p.string().length(255),
    description: p.text().default(''),
    type: p.enum(PROVIDER_TYPES),
    driver: p.enum(PROVIDER_DRIVERS),
    baseUrl: p.string().length(2048).nullable().fieldName('base_url'),
    authScheme: p.enum(AUTH_SCHEMES).fieldName('auth_scheme').default('bearer'),
    /** Header or query parameter name for the `header` / `query` schemes. */
    authParameter: p.string().length(255).nullable().fieldName('auth_parameter'),
    isBuiltin: p.boolean().fieldName('is_builtin').default(false),
    visibility: p.enum(VISIBILITIES).default('workspace'),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    ...optionalOwnership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IProvider = InferEntity<typeof Provider>
