import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, softDelete, timestamps } from './columns.ts'
import { recordOwnership } from './ownership.ts'
import { Run } from './run.entity.ts'
import { Thread } from './thread.entity.ts'

/** Roles of a message's author. */
export const MESSAGE_ROLES = ['user', 'assistant', 'system', 'tool'] as const
export type MessageRole = (typeof MESSAGE_ROLES)[number]

/**
 * One message of a thread (`messages`). Created for the metrics issue (docs/api/metrics.md: messages
 * belong to the workspace of their thread); the messages issue adds its operations.
 */
export const Message = defineEntity({
  name: 'Message',
  tableName: 'messages',
  indexes: [
    { properties: ['thread', 'createdAt'] },
    { properties: ['workspace', 'createdAt'] },
    // A run's messages (its answer, src/runs/runs.service.ts); most messages have no run.
    {
      name: 'messages_run_id_index',
      expression: 'create index "messages_run_id_index" on "messages" ("run_id") where "run_id" is not null',
    },
  ],
  properties: {
    ...resourceKeys(),
    thread: () =>
      p.manyToOne(Thread)
        .fieldName('thread_id')
        .deleteRule('cascade'),
    /** The run that wrote this message, if any. */
    run: () =>
      p.manyToOne(Run)
        .nullable()
        .fieldName('run_id')
        .deleteRule('set null'),
    ...recordOwnership(),
    role: p.enum(MESSAGE_ROLES),
    content: p.text().default(''),
    parts: p.json<unknown[]>().default('[]'),
    model: p.string().length(255).nullable(),
    /** The agent's version that wrote an assistant message (docs/api/versions.md); null for other messages. */
    agentVersion: p.integer().nullable().fieldName('agent_version'),
    promptTokens: p.integer().fieldName('prompt_tokens').nullable(),
    completionTokens: p.integer().fieldName('completion_tokens').nullable(),
    totalTokens: p.integer().fieldName('total_tokens').nullable(),
    latencyMs: p.integer().fieldName('latency_ms').nullable(),
    cost: p.decimal('number').precision(14).scale(6).nullable(),
    /**
     * What the answer drew on: the knowledge chunks a run retrieved (docs/api/knowledge.md, "In a
     * run"), on the run's last assistant message; null when none.
     */
    citations: p.json<unknown[]>().nullable(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IMessage = InferEntity<typeof Message>
