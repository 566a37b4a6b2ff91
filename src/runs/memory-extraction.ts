/**
 * Agent memory (docs/api/resources.md, memories): when an agent's `metadata.memory`
 * is true, the facts a user states about themselves in a run are extracted after it succeeded
 * and stored as `memories` of that user and agent; the newest ones go into the system prompt of
 * the user's later runs of the same agent (src/runs/system-prompt.ts).
 *
 * Extraction asks the run's own model for a JSON array of short facts. Anything else it answers
 * (prose, an error, the local test model's fixed reply) stores nothing: memory is best effort and
 * never fails the run it follows.
 */
import { completeText, costOf } from '../models/index.ts'
import { recordCallUsage } from '../usage/index.ts'
import { spendScopeOfPlan } from './run-executor.ts'
import { uuidv7 } from 'uuidv7'
import type { Config } from '../platform/config.ts'
import type { Em, Orm } from '../platform/db.ts'
import type { RunPlan } from './run-types.ts'

/** Most memories given to a run, newest first. */
export const MEMORIES_IN_PROMPT = 20
/** Most facts stored from one run, and the longest fact kept, in characters. */
const FACTS_PER_RUN = 5
const FACT_MAX = 500

/** The instruction of the extraction call; tests' upstream recognises it by its first words. */
export const EXTRACTION_INSTRUCTION = [
  'You extract durable facts about the user from their message.',
  'Answer with a JSON array of short strings, each one fact the user stated about themselves',
  '(name, preferences, circumstances). Answer [] when there is none. Answer with the JSON only.',
].join(' ')

/** The newest memories of `userId` with agent `agentId`, oldest of them first. */
export async function memoriesFor(em: Em, userId: number, agentId: number): Promise<string[]> {
  const rows = await em.execute<{ content: string }[]>(
    `select content from (select content, id from memories where user_id = ? and agent_id = ? order by id desc limit ${MEMORIES_IN_PROMPT}) m order by id`,
    [userId, agentId],
  )
  return rows.map((row) => row.content)
}

/** Extracts and stores the facts of one succeeded run (module comment); answers how many were stored. */
export async function extractMemories(deps: { orm: Orm; config: Config }, o: { plan: RunPlan; userText: string; answer: string }): Promise<number> {
  const { plan } = o
  if (!plan.agent) return 0
  let text: string
  try {
    text = await completeText(plan.model, deps.config, { system: EXTRACTION_INSTRUCTION, prompt: o.userText }, 'extract memories', (tokens) =>
      // Spent for the run, so counted in its scope (no run of its own); memory is a bonus, so a failure to count it is not the run's.
      recordCallUsage(deps.orm.em.fork(), spendScopeOfPlan(plan), { model: plan.model.llm.slug, ...tokens, cost: costOf(plan.model.llm, tokens), runs: 0 }).catch(() => undefined),
    )
  } catch {
    // Memory is a bonus of a run that already succeeded: a failing extraction stores nothing.
    return 0
  }
  const facts = parseFacts(text)
  if (facts.length === 0) return 0
  const em = deps.orm.em.fork()
  const known = new Set((await memoriesFor(em, plan.userId, plan.agent.id)).map((fact) => fact.toLowerCase()))
  const fresh = facts.filter((fact) => !known.has(fact.toLowerCase()))
  for (const fact of fresh) {
    await em.execute(
      `insert into memories (uuid, content, agent_id, run_id, user_id, workspace_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?, now(), now())`,
      [uuidv7(), fact, plan.agent.id, plan.run.id, plan.userId, plan.workspaceId],
    )
  }
  return fresh.length
}

/** The facts of an extraction answer: a JSON array of strings (in a code fence or not), cleaned and bounded. */
export function parseFacts(answer: string): string[] {
  const match = /\[[\s\S]*\]/.exec(answer)
  if (!match) return []
  let value: unknown
  try {
    value = JSON.parse(match[0])
  } catch {
    return []
  }
  if (!Array.isArray(value)) return []
  const facts = value
    .filter((item): item is string => typeof item === 'string')
    .map((fact) => fact.replace(/\s+/g, ' ').trim())
    .filter((fact) => fact.length > 0 && !fact.includes('\u0000') && fact.isWellFormed())
    .map((fact) => fact.slice(0, FACT_MAX))
  return [...new Set(facts)].slice(0, FACTS_PER_RUN)
}
