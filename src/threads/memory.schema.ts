/**
 * Memory wire shapes (docs/api/resources.md, "Memories"; the specification does not show a Memory)
 * and the row -> wire mapper. A memory is a fact an agent run learned about its user; only that
 * user lists, reads, edits and deletes it (docs/api/resources.md, "Memories").
 */
import { z } from 'zod'
import { AgentSummary, toAgentSummary, type AgentSummaryRow } from './thread.schema.ts'
import { envelope, iso, pageQuery, sortParam, text, timestamp } from '../access/wire.ts'

/** Longest memory `content`. */
export const MEMORY_CONTENT_MAX = 2000

/** The Memory shape. */
export const Memory = z
  .object({
    uuid: z.uuid(),
    content: z.string(),
    /** The agent that learned it; null when none is recorded or the agent was deleted. */
    agent: AgentSummary.nullable(),
    /** The run that wrote it, if any. */
    run_uuid: z.uuid().nullable(),
    user_id: z.number().int(),
    workspace_uuid: z.uuid(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Memory' })
export type TMemory = z.infer<typeof Memory>

/** `{data: Memory}`. */
export const MemoryEnvelope = envelope(Memory)

/** A memory row as src/threads/memories.service.ts reads it. */
export interface MemoryRow extends AgentSummaryRow {
  id: number
  uuid: string
  content: string
  runUuid: string | null
  userId: number
  workspaceUuid: string
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire. */
export function toMemory(row: MemoryRow, appUrl: string): TMemory {
  return {
    uuid: row.uuid,
    content: row.content,
    agent: toAgentSummary(row, appUrl),
    run_uuid: row.runUuid,
    user_id: Number(row.userId),
    workspace_uuid: row.workspaceUuid,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs of the memories endpoints.

/** Sortable columns of the memory list. */
export const MEMORY_SORTS = ['created_at', '-created_at', 'updated_at', '-updated_at'] as const

/** `GET /api/v1/memories` query. */
export const MemoryListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(MEMORY_SORTS, '-created_at'),
  agent_uuid: z.uuid().optional(),
  search: text(255).optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TMemoryListInput = z.infer<typeof MemoryListInput>

/** `PUT /api/v1/memories/{memory_uuid}`: the new `content` (1..2,000 characters, not blank). */
export const UpdateMemoryInput = z.strictObject({
  memory_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  content: text(MEMORY_CONTENT_MAX, 1).refine((value) => value.trim().length > 0, 'must not be blank'),
})
export type TUpdateMemoryInput = z.infer<typeof UpdateMemoryInput>

/** Path of retrieve and delete (plus the workspace context). */
export const MemoryPathInput = z.strictObject({ memory_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })
