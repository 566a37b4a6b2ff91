import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, softDelete, timestamps, workspaceSlugUnique } from './columns.ts'
import { optionalOwnership } from './ownership.ts'
import { Provider } from './provider.entity.ts'

/**
 * A model a provider serves (`large_language_models`, docs/api/resources.md, "Large language models"). Built-in models are seeded by a migration with no owner and no workspace and
 * are visible to everyone; custom ones belong to a custom provider of a workspace.
 *
 * - `model_id`: the identifier sent to the provider (`gpt-4o-mini`); `slug` is how callers and
 *   agent `metadata.large_language_model` name it (unique among the models a caller can see).
 * - Prices are in US dollars per million tokens; `context_window` and `max_output_tokens` in tokens.
 */
export const LargeLanguageModel = defineEntity({
  name: 'LargeLanguageModel',
  tableName: 'large_language_models',
  indexes: [{ properties: ['provider'] }, { properties: ['workspace', 'createdAt'] }],
  uniques: [workspaceSlugUnique('large_language_models')],
  properties: {
    ...resourceKeys(),
    slug: p.string().length(120),
    name: p.string().length(255),
    description: p.text().default(''),
    provider: () =>
      p.manyToOne(Provider)
        .fieldName('provider_id')
        .deleteRule('cascade'),
    modelId: p.string().length(255).fieldName('model_id'),
    contextWindow: p.integer().fieldName('context_window'),
    maxOutputTokens: p.integer().fieldName('max_output_tokens'),
    inputPricePerMillion: p.decimal('number').precision(12).scale(6).fieldName('input_price_per_million').default(0),
    outputPricePerMillion: p.decimal('number').precision(12).scale(6).fieldName('output_price_per_million').default(0),
    supportsTools: p.boolean().fieldName('supports_tools').default(false),
    supportsVision: p.boolean().fieldName('supports_vision').default(false),
    supportsJsonOutput: p.boolean().fieldName('supports_json_output').default(false),
    isBuiltin: p.boolean().fieldName('is_builtin').default(false),
    ...optionalOwnership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type ILargeLanguageModel = InferEntity<typeof LargeLanguageModel>
