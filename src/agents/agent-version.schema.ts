/**
 * Agent version shapes (docs/api/versions.md): the Version as listed, the version with its
 * snapshot, and the request shapes of the versions routes.
 */
import { z } from 'zod'
import { AGENT_VERSIONED_FIELDS, type ProfilePhotoConfigValue } from '../../entities/index.ts'
import { ProfilePhotoConfig, toProfilePhotoConfig } from '../access/resource.schema.ts'
import { UserSummary } from '../access/user-workspace.schema.ts'
import { iso, isRecord, jsonValueOf, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'
import { AgentMetadata, type TAgentMetadata } from './agent.schema.ts'

/** Longest version note, in characters. */
export const VERSION_NOTE_MAX = 2_000

/** A tool of a snapshot: the tool and the account it was bound with (null: none). */
const SnapshotTool = z.object({ tool_uuid: z.uuid(), account_uuid: z.uuid().nullable() })
/** A workflow of a snapshot. */
const SnapshotWorkflow = z.object({ workflow_uuid: z.uuid() })

/** What a version keeps of the agent: its behaviour fields as they were. */
export const AgentSnapshot = z
  .object({
    name: z.string(),
    description: z.string(),
    instruction: z.string(),
    metadata: AgentMetadata,
    profile_photo_config: ProfilePhotoConfig,
    tools: z.array(SnapshotTool),
    workflows: z.array(SnapshotWorkflow),
  })
  .meta({ id: 'AgentSnapshot' })
export type TAgentSnapshot = z.infer<typeof AgentSnapshot>

/** A version as listed: its number, when and by whom it was made, its note and what changed. */
export const AgentVersion = z
  .object({
    version: z.number().int(),
    created_at: timestamp(),
    created_by: UserSummary.nullable(),
    note: z.string().nullable(),
    /** The behaviour fields that differ from the version before, in a fixed order; `[]` for version 1. */
    changed: z.array(z.enum(AGENT_VERSIONED_FIELDS)),
  })
  .meta({ id: 'AgentVersion' })
export type TAgentVersion = z.infer<typeof AgentVersion>

/** A version with its snapshot (`GET agents/{x}/versions/{n}`). */
export const AgentVersionDetail = AgentVersion.extend({ snapshot: AgentSnapshot }).meta({ id: 'AgentVersionDetail' })
export type TAgentVersionDetail = z.infer<typeof AgentVersionDetail>

/** A version number in a path or body: a positive integer. */
export const VersionNumber = z.number().int().min(1).max(2_147_483_647)

const agentPath = { agent_uuid: z.uuid(), workspace_uuid: z.uuid().optional() }

/** `GET agents/{agent_uuid}/versions`: newest first by default. */
export const ListAgentVersionsInput = z.strictObject({ ...agentPath, ...pageQuery, sort: sortParam(['version', '-version'], '-version') })
export type TListAgentVersionsInput = z.infer<typeof ListAgentVersionsInput>

/** `GET agents/{agent_uuid}/versions/{version}` and `POST .../restore`. */
export const AgentVersionPathInput = z.strictObject({ ...agentPath, version: VersionNumber })
export type TAgentVersionPathInput = z.infer<typeof AgentVersionPathInput>

/** `PUT agents/{agent_uuid}/versions/{version}`: the note (null removes it). */
export const AnnotateAgentVersionInput = AgentVersionPathInput.extend({ note: text(VERSION_NOTE_MAX).nullable() })
export type TAnnotateAgentVersionInput = z.infer<typeof AnnotateAgentVersionInput>

/** An `agent_versions` row as the versions reads select it. */
export interface AgentVersionRow {
  version: number
  createdAt: Date | string
  createdById: number | null
  createdByName: string | null
  note: string | null
  changed: unknown
  snapshot?: unknown
}

/** The stored snapshot's fields, as read from its JSON. */
export interface StoredSnapshot {
  name: string
  description: string
  instruction: string
  metadata: TAgentMetadata
  profile_photo_config: ProfilePhotoConfigValue | null
  tools: { tool_uuid: string; account_uuid: string | null }[]
  workflows: { workflow_uuid: string }[]
}

/** A stored snapshot (JSON or its text) opened, with every field present. */
export function storedSnapshot(value: unknown): StoredSnapshot {
  const s = jsonValueOf(value)
  const o = isRecord(s) ? s : {}
  const list = (v: unknown) => (Array.isArray(v) ? v.filter(isRecord) : [])
  return {
    name: String(o.name ?? ''),
    description: String(o.description ?? ''),
    instruction: String(o.instruction ?? ''),
    metadata: (isRecord(o.metadata) ? o.metadata : {}) as TAgentMetadata,
    profile_photo_config: isRecord(o.profile_photo_config) ? (o.profile_photo_config as ProfilePhotoConfigValue) : null,
    tools: list(o.tools).map((t) => ({ tool_uuid: String(t.tool_uuid), account_uuid: typeof t.account_uuid === 'string' ? t.account_uuid : null })),
    workflows: list(o.workflows).map((w) => ({ workflow_uuid: String(w.workflow_uuid) })),
  }
}

const FIELDS: ReadonlySet<string> = new Set(AGENT_VERSIONED_FIELDS)

/** Row -> wire (without the snapshot). */
export function toAgentVersion(row: AgentVersionRow): TAgentVersion {
  const changed = jsonValueOf(row.changed)
  return {
    version: Number(row.version),
    created_at: iso(row.createdAt),
    created_by: row.createdById === null ? null : { id: Number(row.createdById), name: String(row.createdByName ?? '') },
    note: row.note,
    changed: (Array.isArray(changed) ? changed.filter((f): f is TAgentVersion['changed'][number] => FIELDS.has(String(f))) : []),
  }
}

/** Row -> wire with the snapshot. */
export function toAgentVersionDetail(row: AgentVersionRow): TAgentVersionDetail {
  const s = storedSnapshot(row.snapshot)
  return {
    ...toAgentVersion(row),
    snapshot: { ...s, profile_photo_config: toProfilePhotoConfig(s.profile_photo_config) ?? {} },
  }
}
