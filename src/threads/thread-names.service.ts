/**
 * `POST /api/v1/threads/{thread_uuid}/generate-name` (docs/api/resources.md): names a
 * thread from its first messages with the thread agent's model, stores and answers the thread.
 *
 * The model is asked for a title of at most six words; its answer is cut to its first line,
 * stripped of quotes and a final full stop, and bounded to 80 characters. The built-in local test
 * model does not think, so with it the name is the opening words of the first user message.
 * The new name is written with its `thread.update` audit event (docs/api/audit.md).
 */
import { queries } from '../platform/db.ts'
import { ValidationError } from '../platform/errors.ts'
import type { TThread } from './thread.schema.ts'
import { jsonRecordOf, storableText } from '../access/wire.ts'
import { completeText, costOf } from '../models/index.ts'
import { meteredCall, spendScopeOf, type CallTokens } from '../usage/index.ts'
import { resolveAgentModel } from '../models/index.ts'
import { threadHistory } from './messages.service.ts'
import type { ResourceCtx } from '../context.ts'
import { readThread, requireThread } from './threads.service.ts'
import { audit, fieldChanges } from '../access/audit.ts'

/** Messages the name is made from. */
const NAME_SOURCE_MESSAGES = 6
/** Longest name stored, in characters. */
const NAME_MAX = 80

const INSTRUCTION = 'Name this conversation in at most six words. Answer with the name only, without quotes.'

/**
 * Names thread `uuid` (module comment).
 * @throws NotFoundError (not the caller's thread), ValidationError (no messages yet, or the
 *   agent's model is unknown or has no credential), UpstreamError / UpstreamTimeoutError.
 */
export async function generateName(ctx: ResourceCtx, uuid: string): Promise<{ data: TThread }> {
  const thread = await requireThread(ctx, uuid, true)
  const history = (await threadHistory(ctx.em, thread.id, NAME_SOURCE_MESSAGES)).filter((m) => m.content.trim() !== '')
  if (history.length === 0) throw new ValidationError(['thread_uuid'], 'The thread has no messages to name it from')
  const agent = await queries(ctx.em).selectFrom('agents').select('metadata').where('id', '=', thread.agentId).executeTakeFirst()
  const model = await resolveAgentModel(ctx, jsonRecordOf(agent?.metadata))
  let name: string
  if (model.driver === 'local') {
    const first = history.find((m) => m.role === 'user') ?? history[0]
    name = first.content.split(/\s+/).filter(Boolean).slice(0, 6).join(' ')
  } else {
    const transcript = history
      .map((m) => `${m.role}: ${m.content}`)
      .join('\n')
      .slice(0, 8_000)
    const metered = { slug: model.llm.slug, costOf: (tokens: CallTokens) => costOf(model.llm, tokens) }
    const answer = await meteredCall(ctx, spendScopeOf(ctx, thread.agentId), metered, (onUsage) =>
      completeText(model, ctx.config, { system: INSTRUCTION, prompt: transcript, maxOutputTokens: 30 }, 'name the thread', onUsage),
    )
    name = cleanName(answer)
  }
  const cleaned = storableText(cleanName(name)) || 'Untitled conversation'
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    const before = await db.selectFrom('threads').select('name').where('id', '=', thread.id).forUpdate().executeTakeFirstOrThrow()
    await db
      .updateTable('threads')
      .set((eb) => ({ name: cleaned, updated_at: eb.fn<Date>('now') }))
      .where('id', '=', thread.id)
      .execute()
    await audit(em, ctx, {
      action: 'thread.update',
      resource: { type: 'thread', uuid: thread.uuid },
      changes: fieldChanges({ name: before.name }, { name: cleaned }),
    })
  })
  return { data: await readThread(ctx.em, ctx.config.appUrl, thread.id) }
}

/** First line, no surrounding quotes or final full stop, white space folded, at most {@link NAME_MAX} characters. */
export function cleanName(raw: string): string {
  const line = raw.trim().split('\n')[0] ?? ''
  return line
    .replace(/^["'“”‘’`*#\s]+|["'“”‘’`*\s]+$/g, '')
    .replace(/\.$/, '')
    .replace(/\s+/g, ' ')
    .slice(0, NAME_MAX)
    .trim()
}
