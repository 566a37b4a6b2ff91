import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { presentation, resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'

/** A reusable prompt template with declared inputs (`prompts`, specification: "Prompt"). */
export const Prompt = defineEntity({
  name: 'Prompt',
  tableName: 'prompts',
  indexes: [{ properties: ['workspace', 'createdAt'] }, { properties: ['user'] }],
  properties: {
    ...resourceKeys(),
    ...presentation(),
    content: p.text(),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IPrompt = InferEntity<typeof Prompt>
