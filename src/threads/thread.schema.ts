/**
 * Thread wire shapes (docs/api/resources.md, "Threads"; the specification does not show a Thread) and
 * the row -> wire mapper. A thread is a private conversation of the user who created it, in one
 * workspace, with one agent (docs/api/resources.md, "Threads").
 */
import { z } from 'zod'
import type { ProfilePhotoConfigValue } from '../../entities/index.ts'
import { ProfilePhotoConfig, StorableObject, toProfilePhotoConfig } from '../access/resource.schema.ts'
import { envelope, iso, isoOrNull, isRecord, jsonBytes, jsonValueOf, name, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'
import { mediaUrl } from '../access/user-workspace.schema.ts'

/** The agent a thread (or a memory) belongs to, as embedded there. */
export const AgentSummary = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    profile_photo_url: z.string().nullable(),
    profile_photo_config: ProfilePhotoConfig,
  })
  .meta({ id: 'AgentSummary' })
export type TAgentSummary = z.infer<typeof AgentSummary>

/** An agent's columns as a thread or memory query reads them (`agentUuid`, `agentName`, ...). */
export interface AgentSummaryRow {
  agentUuid: string | null
  agentName: string | null
  agentProfilePhotoKey: string | null
  agentProfilePhotoConfig: ProfilePhotoConfigValue | null
}

/** Select list of {@link AgentSummaryRow} over the `agents` alias `a`. */
export const AGENT_SUMMARY_COLUMNS = `a.uuid as "agentUuid", a.name as "agentName",
  a.profile_photo_key as "agentProfilePhotoKey", a.profile_photo_config as "agentProfilePhotoConfig"`

/** Row -> `AgentSummary`, or null when the row has no (live) agent. */
export function toAgentSummary(row: AgentSummaryRow, appUrl: string): TAgentSummary | null {
  if (!row.agentUuid) return null
  return {
    uuid: row.agentUuid,
    name: row.agentName ?? '',
    profile_photo_url: mediaUrl(appUrl, row.agentProfilePhotoKey),
    profile_photo_config: toProfilePhotoConfig(row.agentProfilePhotoConfig) ?? {},
  }
}

/** The Thread shape. */
export const Thread = z
  .object({
    uuid: z.uuid(),
    name: z.string().nullable(),
    agent: AgentSummary,
    user_id: z.number().int(),
    workspace_uuid: z.uuid(),
    messages_count: z.number().int(),
    metadata: z.record(z.string(), z.unknown()),
    /** When the thread's latest live message was written; null when it has none. */
    last_message_at: timestamp().nullable(),
    /** The run the thread is busy with (running or waiting for an approval; else the next queued one); null when idle. */
    active_run: z.object({ uuid: z.uuid(), status: z.enum(['queued', 'running', 'awaiting_approval']) }).nullable(),
    /** Runs waiting in the thread's queue (docs/api/runs.md, "Busy threads"). */
    queued_runs_count: z.number().int(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Thread' })
export type TThread = z.infer<typeof Thread>

/** `{data: Thread}`. */
export const ThreadEnvelope = envelope(Thread)

/** A thread row as src/threads/threads.service.ts reads it (its agent and workspace joined). */
export interface ThreadRow extends AgentSummaryRow {
  id: number
  uuid: string
  name: string | null
  userId: number
  workspaceUuid: string
  messagesCount: number
  metadata: Record<string, unknown>
  lastMessageAt: Date | string | null
  /** `{uuid, status}` as JSON (text or parsed), or null. */
  activeRun?: unknown
  queuedRunsCount?: number
  createdAt: Date | string
  updatedAt: Date | string
}

/** The `active_run` of a thread row. */
function activeRunOf(value: unknown): TThread['active_run'] {
  const parsed = jsonValueOf(value)
  if (!isRecord(parsed) || typeof parsed.uuid !== 'string') return null
  const status = parsed.status === 'queued' || parsed.status === 'awaiting_approval' ? parsed.status : 'running'
  return { uuid: parsed.uuid, status }
}

/** Row -> wire. */
export function toThread(row: ThreadRow, appUrl: string): TThread {
  const agent = toAgentSummary(row, appUrl)
  if (!agent) throw new Error(`thread ${row.uuid} was read without its agent`)
  return {
    uuid: row.uuid,
    name: row.name,
    agent,
    user_id: Number(row.userId),
    workspace_uuid: row.workspaceUuid,
    messages_count: Number(row.messagesCount),
    metadata: row.metadata ?? {},
    last_message_at: isoOrNull(row.lastMessageAt),
    active_run: activeRunOf(row.activeRun),
    queued_runs_count: Number(row.queuedRunsCount ?? 0),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs of the threads endpoints.

/** Largest thread `metadata`, serialized as JSON, in bytes (64 KiB, as agents). */
export const THREAD_METADATA_MAX_BYTES = 64 * 1024
/** Sortable columns of the thread list. */
export const THREAD_SORTS = [
  'created_at', '-created_at', 'updated_at', '-updated_at', 'name', '-name', 'messages_count', '-messages_count',
] as const

/** Thread `metadata`: any JSON object jsonb can store, at most 64 KiB. */
const ThreadMetadata = StorableObject().superRefine((value, ctx) => {
  if (jsonBytes(value) > THREAD_METADATA_MAX_BYTES) {
    ctx.addIssue({ code: 'custom', message: `metadata must not exceed ${THREAD_METADATA_MAX_BYTES} bytes as JSON` })
  }
})

/** `POST /api/v1/threads` (plus the workspace context's `workspace_uuid`). */
export const CreateThreadInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  agent_uuid: z.uuid(),
  name: name().nullable().optional(),
  metadata: ThreadMetadata.optional(),
})
export type TCreateThreadInput = z.infer<typeof CreateThreadInput>

/**
 * `PUT /api/v1/threads/{thread_uuid}`: omitted fields are kept, `name: null` clears the name,
 * `metadata` merges key by key (`null` removes a key).
 */
export const UpdateThreadInput = z.strictObject({
  thread_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: name().nullable().optional(),
  metadata: ThreadMetadata.optional(),
})
export type TUpdateThreadInput = z.infer<typeof UpdateThreadInput>

/** Path of retrieve and delete (plus the workspace context). */
export const ThreadPathInput = z.strictObject({ thread_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `GET /api/v1/threads` query. */
export const ThreadListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(THREAD_SORTS, '-created_at'),
  agent_uuid: z.uuid().optional(),
  search: text(255).optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TThreadListInput = z.infer<typeof ThreadListInput>
