import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Agent } from './agent.entity.ts'
import { deletedIdIndex, resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'

/**
 * A conversation with an agent (`threads`). Created here so agent `threads_count` is real;
 * messages and runs extend it in their own issue.
 */
export const Thread = defineEntity({
  name: 'Thread',
  tableName: 'threads',
  indexes: [
    { properties: ['workspace', 'createdAt'] },
    { properties: ['agent'] },
    { properties: ['user'] },
    // "Whose thread is not deleted" of the messages metrics (src/metrics/metrics.service.ts).
    deletedIdIndex('threads'),
  ],
  properties: {
    ...resourceKeys(),
    name: p.string().length(255).nullable(),
    agent: () =>
      p.manyToOne(Agent)
        .fieldName('agent_id')
        .deleteRule('cascade'),
    messagesCount: p.integer().fieldName('messages_count').default(0),
    metadata: p.json<Record<string, unknown>>().default('{}'),
    /** The evaluation whose item's run made this thread (docs/api/evaluations.md): left out of thread lists and metrics. */
    evaluationUuid: p.uuid().nullable().fieldName('evaluation_uuid'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IThread = InferEntity<typeof Thread>
