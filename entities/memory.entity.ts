import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Agent } from './agent.entity.ts'
import { resourceKeys, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'
import { Run } from './run.entity.ts'

/**
 * A fact about a user that an agent with `metadata.memory` learned in a run (`memories`, docs/api/resources.md). It belongs to that user (`user_id`) in the agent's workspace and is
 * given back to the same agent in the user's later runs; only its owner lists, edits or deletes it.
 */
export const Memory = defineEntity({
  name: 'Memory',
  tableName: 'memories',
  indexes: [{ properties: ['user', 'agent'] }, { properties: ['workspace', 'createdAt'] }],
  properties: {
    ...resourceKeys(),
    content: p.text(),
    agent: () =>
      p.manyToOne(Agent)
        .nullable()
        .fieldName('agent_id')
        .deleteRule('set null'),
    run: () =>
      p.manyToOne(Run)
        .nullable()
        .fieldName('run_id')
        .deleteRule('set null'),
    ...ownership(),
    ...timestamps(),
  },
})

export type IMemory = InferEntity<typeof Memory>
