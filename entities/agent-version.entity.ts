import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Agent } from './agent.entity.ts'
import { User, Workspace } from './user-workspace.entity.ts'

/** The behaviour fields of an agent a version keeps (docs/api/versions.md), in the order `changed` lists them. */
export const AGENT_VERSIONED_FIELDS = ['name', 'description', 'instruction', 'metadata', 'profile_photo_config', 'tools', 'workflows'] as const
export type AgentVersionedField = (typeof AGENT_VERSIONED_FIELDS)[number]

/**
 * One version of an agent (`agent_versions`, docs/api/versions.md): the snapshot of its behaviour
 * fields as stored (`tools` as `{tool_uuid, account_uuid}`, `workflows` as `{workflow_uuid}`, in
 * the agent's order), the fields that differ from the version before, who made it and a note.
 */
export const AgentVersion = defineEntity({
  name: 'AgentVersion',
  tableName: 'agent_versions',
  uniques: [{ properties: ['agent', 'version'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    agent: () => p.manyToOne(Agent).fieldName('agent_id').deleteRule('cascade'),
    version: p.integer(),
    snapshot: p.json<Record<string, unknown>>(),
    changed: p.json<string[]>(),
    note: p.text().nullable(),
    createdBy: () => p.manyToOne(User).nullable().fieldName('created_by').deleteRule('set null'),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

/**
 * An event recorded in the transaction of the change it announces (`outbox_events`), for outbound
 * delivery to the workspace's subscribers: so an event exists exactly when its change committed.
 * `data` is the event's payload `data` (docs/api/versions.md, "Events"), or null when the
 * dispatcher reads it from `subject_uuid` when it sends the event (docs/api/webhooks.md).
 */
export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  indexes: [{ properties: ['workspace', 'id'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique(),
    type: p.text(),
    workspace: () => p.manyToOne(Workspace).fieldName('workspace_id').deleteRule('cascade'),
    data: p.json<Record<string, unknown>>().nullable(),
    /** The resource the event announces, read when it is sent (events recorded by the triggers of docs/api/webhooks.md). */
    subjectUuid: p.uuid().nullable().fieldName('subject_uuid'),
    /** The user whose access reads the subject. */
    actorId: p.bigint('number').nullable().fieldName('actor_id'),
    /** When the dispatcher made its deliveries (null: not yet). */
    dispatchedAt: p.datetime().nullable().fieldName('dispatched_at'),
    createdAt: p.datetime().fieldName('created_at').onCreate(() => new Date()),
  },
})

export type IAgentVersion = InferEntity<typeof AgentVersion>
export type IOutboxEvent = InferEntity<typeof OutboxEvent>
