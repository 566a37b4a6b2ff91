/**
 * Messages (docs/api/resources.md, "Messages"): the messages of a thread, seen by whoever sees the
 * thread (its creator, in its workspace: ./threads.service.ts). `POST /api/v1/messages` adds a
 * message without running the model; runs add theirs through {@link appendMessage}. Every insert
 * and delete keeps `threads.messages_count` true in the same statement.
 */
import { uuidv7 } from 'uuidv7'
import type { MessageRole } from '../../entities/index.ts'
import { queries, type Em } from '../platform/db.ts'
import { NotFoundError } from '../platform/errors.ts'
import {
  messageColumns,
  toMessage,
  toMessageParts,
  type MessageRow,
  type TCreateMessageInput,
  type TMessage,
  type TMessageListInput,
  type TMessagePart,
  type TUpdateMessageInput,
} from './message.schema.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { listPage, type ListSource } from '../access/list-page.ts'
import { unprefix } from '../platform/sql.ts'
import { requireThread, threadScopeSql } from './threads.service.ts'
import type { ResourceCtx } from '../context.ts'
import { storableJson, storableText } from '../access/wire.ts'
import { audit, fieldChanges } from '../access/audit.ts'

const SOURCE: ListSource = {
  from: 'messages m join threads t on t.id = m.thread_id left join runs r on r.id = m.run_id',
  columns: messageColumns('m', 't.uuid', 'r.uuid'),
  alias: 'm',
  sorts: { created_at: 'm.created_at' },
}

/** The wire Messages of these ids, in the order given (no access check: the caller has made it). */
export async function readMessages(em: Em, ids: number[]): Promise<TMessage[]> {
  if (ids.length === 0) return []
  const rows = await em.execute<MessageRow[]>(`select ${SOURCE.columns} from ${SOURCE.from} where m.id in (?)`, [ids])
  const byId = new Map(rows.map((row) => [Number(row.id), toMessage(row)]))
  return ids.flatMap((id) => byId.get(id) ?? [])
}

async function readMessage(em: Em, id: number): Promise<{ data: TMessage }> {
  const [message] = await readMessages(em, [id])
  if (!message) throw new NotFoundError('Message')
  return { data: message }
}

/** A live message of a thread the caller sees. @throws NotFoundError otherwise. */
async function requireMessage(ctx: ResourceCtx, uuid: string): Promise<{ id: number; uuid: string; threadId: number }> {
  const scope = threadScopeSql('t', ctx)
  const [row] = await ctx.em.execute(
    `select m.id::float8 as id, m.uuid, m.thread_id::float8 as "threadId" from messages m join threads t on t.id = m.thread_id
     where m.uuid = ? and m.deleted_at is null and ${scope.sql}`,
    [uuid, ...scope.params],
  )
  if (!row) throw new NotFoundError('Message')
  return { id: Number(row.id), uuid: String(row.uuid), threadId: Number(row.threadId) }
}

/** What {@link appendMessage} stores. */
export interface AppendMessage {
  threadId: number
  workspaceId: number
  userId: number | null
  runId: number | null
  role: MessageRole
  content: string
  parts: unknown[]
  model?: string | null
  promptTokens?: number | null
  completionTokens?: number | null
  totalTokens?: number | null
  latencyMs?: number | null
  cost?: number | null
}

/**
 * Inserts a message and counts it in `threads.messages_count` (and touches the thread's
 * `updated_at`) in one statement. Text PostgreSQL cannot store (NUL, lone surrogates) is cleaned,
 * not refused, so a model's output is always kept. `created_at` is the clock's time, so messages
 * written in one transaction still sort in the order they were appended. No access check: the
 * caller has made it.
 */
export async function appendMessage(em: Em, o: AppendMessage): Promise<{ id: number; uuid: string }> {
  return queries(em)
    .with('inserted', (db) =>
      db
        .insertInto('messages')
        .values((eb) => ({
          uuid: uuidv7(),
          thread_id: o.threadId,
          run_id: o.runId,
          user_id: o.userId,
          workspace_id: o.workspaceId,
          role: o.role,
          content: storableText(o.content),
          // Already JSON text (storableJson serialises once and cleans only when needed): cast, not encoded again.
          parts: eb.cast<unknown[]>(eb.val(storableJson(o.parts)), 'jsonb'),
          model: o.model ? storableText(o.model) : null,
          prompt_tokens: o.promptTokens ?? null,
          completion_tokens: o.completionTokens ?? null,
          total_tokens: o.totalTokens ?? null,
          latency_ms: o.latencyMs ?? null,
          cost: o.cost ?? null,
          created_at: eb.fn<Date>('clock_timestamp'),
          updated_at: eb.fn<Date>('clock_timestamp'),
        }))
        .returning(['id', 'uuid', 'thread_id']),
    )
    .with('counted', (db) =>
      db
        .updateTable('threads')
        .set((eb) => ({ messages_count: eb('messages_count', '+', 1), updated_at: eb.fn<Date>('now') }))
        .where('id', '=', (eb) => eb.selectFrom('inserted').select('thread_id')),
    )
    .selectFrom('inserted')
    .select(['id', 'uuid'])
    .executeTakeFirstOrThrow()
}

/**
 * The last `limit` live messages of a thread, oldest first: what a run in the thread sends the
 * model before the new input.
 */
export async function threadHistory(
  em: Em,
  threadId: number,
  limit: number,
): Promise<{ role: MessageRole; content: string; parts: TMessagePart[] }[]> {
  const rows = await queries(em)
    .selectFrom((db) =>
      db
        .selectFrom('messages')
        .select(['id', 'created_at', 'role', 'content', 'parts'])
        .where('thread_id', '=', threadId)
        .where('deleted_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(Math.max(0, Math.floor(limit)))
        .as('h'),
    )
    .select(['h.role', 'h.content', 'h.parts'])
    .orderBy('h.created_at')
    .orderBy('h.id')
    .execute()
  return rows.map((row) => ({ role: row.role, content: row.content, parts: toMessageParts(row.parts) }))
}

/**
 * The live messages of one of the caller's threads (`thread_uuid`), oldest first unless
 * `sort=-created_at`, filtered by `search` (content, case-insensitive), paginated.
 * @throws NotFoundError when the caller does not see the thread.
 */
export async function list(ctx: ResourceCtx, input: TMessageListInput) {
  const thread = await requireThread(ctx, input.thread_uuid, false)
  const where = new Conditions({ sql: 'm.thread_id = ? and m.deleted_at is null', params: [thread.id] })
  if (input.search) where.add(searchSql(['m.content'], input.search))
  const query = { thread_uuid: input.thread_uuid, search: input.search }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/messages', query }, (row) => toMessage(unprefix<MessageRow>(row, '')))
}

/**
 * Adds a message to one of the caller's threads without running the model; without `parts` it
 * gets one text part holding `content`.
 * @throws NotFoundError when the caller does not see the thread.
 */
export async function create(ctx: ResourceCtx, input: TCreateMessageInput): Promise<{ data: TMessage }> {
  const thread = await requireThread(ctx, input.thread_uuid, true)
  const parts = input.parts ?? [{ type: 'text', text: input.content }]
  const id = await ctx.em.transactional(async (em) => {
    const message = await appendMessage(em, {
      threadId: thread.id,
      workspaceId: ctx.workspace.workspace.id,
      userId: ctx.auth.user.id,
      runId: null,
      role: input.role,
      content: input.content,
      parts,
    })
    await audit(em, ctx, {
      action: 'message.create',
      resource: { type: 'message', uuid: message.uuid },
      changes: fieldChanges(null, { thread_uuid: thread.uuid, role: input.role, content: input.content, parts }),
    })
    return message.id
  })
  return readMessage(ctx.em, id)
}

/** Retrieves a message of one of the caller's threads. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TMessage }> {
  const { id } = await requireMessage(ctx, uuid)
  return readMessage(ctx.em, id)
}

/**
 * The parts of an edited message: its text parts give way to one text part holding the new
 * content, where the first one was (at the end when there was none); tool parts are kept.
 */
export function editedParts(stored: unknown, content: string): TMessagePart[] {
  const parts = toMessageParts(stored)
  const first = parts.findIndex((part) => part.type === 'text')
  const kept = parts.filter((part) => part.type !== 'text')
  const at = first === -1 ? kept.length : parts.slice(0, first).filter((part) => part.type !== 'text').length
  return [...kept.slice(0, at), { type: 'text', text: content }, ...kept.slice(at)]
}

/**
 * Replaces a message's `content` (and its text parts, see {@link editedParts}).
 * @throws NotFoundError when the caller does not see it.
 */
export async function update(ctx: ResourceCtx, input: TUpdateMessageInput): Promise<{ data: TMessage }> {
  const message = await requireMessage(ctx, input.message_uuid)
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    const before = await db
      .selectFrom('messages')
      .select(['content', 'parts'])
      .where('id', '=', message.id)
      .forUpdate()
      .executeTakeFirstOrThrow()
    const parts = editedParts(before.parts, input.content)
    await db
      .updateTable('messages')
      .set((eb) => ({ content: input.content, parts, updated_at: eb.fn<Date>('now') }))
      .where('id', '=', message.id)
      .execute()
    await audit(em, ctx, {
      action: 'message.update',
      resource: { type: 'message', uuid: message.uuid },
      changes: fieldChanges({ content: before.content, parts: before.parts }, { content: input.content, parts }),
    })
  })
  return readMessage(ctx.em, message.id)
}

/**
 * Soft-deletes a message and uncounts it from its thread's `messages_count`, in one statement
 * (a concurrent second delete counts nothing, and records nothing).
 * @throws NotFoundError when the caller does not see it.
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const message = await requireMessage(ctx, uuid)
  await ctx.em.transactional(async (em) => {
    const counted = await queries(em)
      .with('deleted', (db) =>
        db
          .updateTable('messages')
          .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
          .where('id', '=', message.id)
          .where('deleted_at', 'is', null)
          .returning('thread_id'),
      )
      .updateTable('threads')
      .set((eb) => ({
        messages_count: eb.fn<number>('greatest', [eb('messages_count', '-', 1), eb.lit(0)]),
        updated_at: eb.fn<Date>('now'),
      }))
      .where('id', 'in', (eb) => eb.selectFrom('deleted').select('thread_id'))
      .returning('id')
      .execute()
    if (counted.length > 0) await audit(em, ctx, { action: 'message.delete', resource: { type: 'message', uuid: message.uuid } })
  })
}
