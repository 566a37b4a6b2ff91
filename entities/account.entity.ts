import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'
import { Provider } from './provider.entity.ts'

/** Accounts are never public: credentials stay with their owner or their workspace. */
export const ACCOUNT_VISIBILITIES = ['private', 'workspace'] as const
export type AccountVisibility = (typeof ACCOUNT_VISIBILITIES)[number]

/**
 * Credentials of a provider in a workspace (`accounts`, docs/api/resources.md). The secret is stored
 * only as AES-256-GCM ciphertext (`secret_ciphertext`: iv, tag and data, base64) together with the
 * id of the key that sealed it (`secret_key_id`), so keys can be rotated; `secret_hint` is the
 * masked form shown in responses.
 */
export const Account = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  indexes: [{ properties: ['workspace', 'createdAt'] }, { properties: ['provider'] }],
  properties: {
    ...resourceKeys(),
    name: p.string().length(255),
    provider: () =>
      p.manyToOne(Provider)
        .fieldName('provider_id')
        .deleteRule('cascade'),
    visibility: p.enum(ACCOUNT_VISIBILITIES).default('private'),
    secretCiphertext: p.text().nullable().fieldName('secret_ciphertext').hidden().lazy(),
    secretKeyId: p.string().length(64).nullable().fieldName('secret_key_id'),
    secretHint: p.string().length(32).nullable().fieldName('secret_hint'),
    /** Overrides the provider's base URL (any OpenAI-compatible server). */
    baseUrl: p.string().length(2048).nullable().fieldName('base_url'),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IAccount = InferEntity<typeof Account>
