/**
 * A thread's stored messages (`messages.list`, oldest first) as the turns the chat shows: the
 * user's messages, and each run's answer as one block, whatever number of messages it stored (per
 * model step an `assistant` message, and a `tool` message with the results when tools ran:
 * docs/api/runs.md, "What a run stores"). A tool result is shown inside the call it answers, so a
 * stored answer reads like the streamed one it replaces.
 */
import type { RouterOutputs } from '../../lib/api.ts'
import type { AnswerItem, Source, Usage } from './runStream.ts'

export type Message = RouterOutputs['messages']['list']['data'][number]

export type Turn =
  | { kind: 'user'; key: string; text: string; runUuid: string | null }
  | { kind: 'system'; key: string; text: string }
  | { kind: 'answer'; key: string; runUuid: string | null; items: AnswerItem[]; sources: Source[]; usage: Usage | null; model: string | null }

/** The items of one assistant or tool message: its text, calls and results (results join their call). */
function addParts(items: AnswerItem[], message: Message): void {
  if (message.parts.length === 0 && message.content) {
    items.push({ kind: 'text', text: message.content })
    return
  }
  for (const part of message.parts) {
    if (part.type === 'text') {
      if (part.text) items.push({ kind: 'text', text: part.text })
    } else if (part.type === 'tool-call') {
      items.push({ kind: 'tool', id: part.tool_call_id, name: part.tool_name, input: part.input })
    } else {
      const result = { output: part.output, isError: part.is_error }
      const call = items.find((item) => item.kind === 'tool' && item.id === part.tool_call_id && !item.result)
      if (call && call.kind === 'tool') call.result = result
      else items.push({ kind: 'tool', id: part.tool_call_id, name: part.tool_name, input: null, result })
    }
  }
}

function addUsage(usage: Usage | null, message: Message): Usage | null {
  if (message.role !== 'assistant' || message.total_tokens === null) return usage
  const base = usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 }
  return {
    prompt_tokens: base.prompt_tokens + (message.prompt_tokens ?? 0),
    completion_tokens: base.completion_tokens + (message.completion_tokens ?? 0),
    total_tokens: base.total_tokens + message.total_tokens,
    cost: base.cost + (message.cost ?? 0),
  }
}

/** Stored messages -> turns; messages of `hideRun` but its user message are left out (it is being streamed). */
export function toTurns(messages: Message[], hideRun: string | null = null): Turn[] {
  const turns: Turn[] = []
  for (const message of messages) {
    if (message.role === 'user') {
      turns.push({ kind: 'user', key: message.uuid, text: message.content, runUuid: message.run_uuid })
      continue
    }
    if (message.role === 'system') {
      turns.push({ kind: 'system', key: message.uuid, text: message.content })
      continue
    }
    if (hideRun && message.run_uuid === hideRun) continue
    const last = turns.at(-1)
    const answer =
      last?.kind === 'answer' && (last.runUuid === null ? message.role === 'tool' : last.runUuid === message.run_uuid)
        ? last
        : { kind: 'answer' as const, key: message.uuid, runUuid: message.run_uuid, items: [], sources: [], usage: null, model: null }
    if (answer !== last) turns.push(answer)
    addParts(answer.items, message)
    answer.usage = addUsage(answer.usage, message)
    answer.model = message.model ?? answer.model
    for (const citation of message.citations) {
      if (!answer.sources.some((source) => source.chunkUuid === citation.chunk_uuid)) {
        answer.sources.push({ chunkUuid: citation.chunk_uuid, documentName: citation.document_name, score: citation.score })
      }
    }
  }
  return turns
}
