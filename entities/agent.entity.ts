import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { deletedIdIndex, presentation, resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'

/**
 * An AI assistant (`agents`, specification: "Agent"). `usage_count` and `last_used_at` follow
 * its runs; tools, workflows, files and categories are pivot tables.
 */
export const Agent = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  indexes: [
    { properties: ['workspace', 'createdAt'] },
    { properties: ['user'] },
    // "Whose agent is not deleted" of the threads and messages metrics (src/metrics/metrics.service.ts).
    deletedIdIndex('agents'),
  ],
  properties: {
    ...resourceKeys(),
    ...presentation(),
    instruction: p.text().default(''),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    isTemplate: p.boolean().fieldName('is_template').default(false),
    /** The current version (docs/api/versions.md): 1 at creation, +1 for each change of a behaviour field. */
    version: p.integer().default(1),
    usageCount: p.integer().fieldName('usage_count').default(0),
    lastUsedAt: p.datetime().nullable().fieldName('last_used_at'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IAgent = InferEntity<typeof Agent>
