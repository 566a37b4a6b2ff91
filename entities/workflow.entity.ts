import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { deletedIdIndex, presentation, resourceKeys, softDelete, timestamps } from './columns.ts'
import { ownership } from './ownership.ts'

/**
 * A node/edge graph (`workflows`, specification: "Workflow"). Stored with structural checks;
 * the node types and the executor live in src/workflows.
 */
export const Workflow = defineEntity({
  name: 'Workflow',
  tableName: 'workflows',
  indexes: [
    { properties: ['workspace', 'createdAt'] },
    { properties: ['user'] },
    // Made with the agents' one (Migration20261121153411_deleted_indexes); no statement reads it
    // yet: the executions metric checks each execution's workflow through the list scope instead.
    deletedIdIndex('workflows'),
  ],
  properties: {
    ...resourceKeys(),
    ...presentation(),
    isActive: p.boolean().fieldName('is_active').default(false),
    isTemplate: p.boolean().fieldName('is_template').default(false),
    nodes: p.json<unknown[]>().default('[]'),
    edges: p.json<unknown[]>().default('[]'),
    settings: p.json<Record<string, unknown>>().default('{}'),
    staticData: p.json<Record<string, unknown>>().fieldName('static_data').default('{}'),
    pinData: p.json<Record<string, unknown>>().fieldName('pin_data').default('{}'),
    triggerCount: p.integer().fieldName('trigger_count').default(0),
    /**
     * The secret of `POST /api/v1/hooks/{webhook_token}`: 64 hex characters from two random
     * UUIDs (244 random bits), made by the database so every row, old or new, has one.
     */
    webhookToken: p
      .string()
      .length(64)
      .unique()
      .fieldName('webhook_token')
      // Written as PostgreSQL prints it back, so schema diffs see no change.
      .defaultRaw(`replace(((gen_random_uuid())::text || (gen_random_uuid())::text), '-'::text, ''::text)`),
    /**
     * The HMAC-SHA256 key of the `X-Signature` check, sealed like account secrets
     * (src/platform/secrets.ts, context `workflows.webhook_secret`); null: no check.
     */
    webhookSecretCiphertext: p.text().nullable().fieldName('webhook_secret_ciphertext').hidden().lazy(),
    webhookSecretKeyId: p.string().length(64).nullable().fieldName('webhook_secret_key_id'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IWorkflow = InferEntity<typeof Workflow>

/**
 * When a workflow's schedule trigger is next due (`workflow_schedules`, docs/operations.md,
 * "Scheduling"): one row per active workflow whose trigger is a `schedule_trigger`, written on
 * every save (src/workflows/schedules.ts) and moved on each time it fires.
 */
export const WorkflowSchedule = defineEntity({
  name: 'WorkflowSchedule',
  tableName: 'workflow_schedules',
  indexes: [{ properties: ['nextRunAt'] }],
  properties: {
    workflow: () =>
      p.oneToOne(Workflow)
        .primary()
        .owner()
        .fieldName('workflow_id')
        .deleteRule('cascade'),
    /** The trigger's cron expression (five fields, or six with seconds first). */
    cron: p.string().length(200),
    /** The IANA time zone the expression is read in. */
    timezone: p.string().length(100),
    nextRunAt: p.datetime().fieldName('next_run_at'),
    updatedAt: p.datetime().fieldName('updated_at'),
  },
})

export type IWorkflowSchedule = InferEntity<typeof WorkflowSchedule>
