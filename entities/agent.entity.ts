import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { ownership, presentation, resourceKeys, softDelete, timestamps } from './columns.ts'

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
    // The few deleted rows, so "whose agent is not deleted" (threads and executions metrics) is an
    // anti-join on a tiny index instead of a scan of every row.
    { name: 'agents_deleted_id_index', expression: 'create index "agents_deleted_id_index" on "agents" ("id") where "deleted_at" is not null' },
  ],
  properties: {
    ...resourceKeys(),
    ...presentation(),
    instruction: p.text().default(''),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    isTemplate: p.boolean().fieldName('is_template').default(false),
    usageCount: p.integer().fieldName('usage_count').default(0),
    lastUsedAt: p.datetime().nullable().fieldName('last_used_at'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IAgent = InferEntity<typeof Agent>
