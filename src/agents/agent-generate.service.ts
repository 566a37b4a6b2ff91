/**
 * `POST /api/v1/agents/generate` (docs/api/generate-and-leaderboard.md, "Generating an agent"):
 * asks a language model of the request's workspace to design an agent from a description, and
 * stores it as an ordinary agent of the caller.
 *
 * - Model: `large_language_model` (a catalog slug or uuid) or the workspace's default, resolved
 *   like a run's (./agent-model.ts); errors name `large_language_model`. The built-in local test
 *   model does not think: asking it is a 400 naming `large_language_model`.
 * - Tools: the tools the caller could bind (`bindableTools` of src/access/references.ts, the
 *   {@link MAX_OFFERED_TOOLS} most recently updated) are listed in the system prompt and are the
 *   only uuids the JSON Schema allows. A uuid the model names anyway is dropped, as is a repeat:
 *   a tool the caller cannot use is never bound, and never costs a repair.
 * - Asking: src/models/structured-generate.ts, the mechanism workflow generation uses too:
 *   structured output with the JSON Schema of `generatedAgent` (the create input's fields a
 *   complete agent needs, each required), one repair.
 * - Checks: `generatedAgent`, then the agent the answer makes is checked with `CreateAgentInput`
 *   itself (the metadata size and every other rule of `POST /api/v1/agents`). When the repaired
 *   answer still fails: 502 naming the problems, and nothing is stored. Unlike a workflow's
 *   description, the request cannot be blamed for a model that cannot fill a fixed shape.
 * - Storing: `create` of ./agents.service.ts: private, owned by the caller, in the request's
 *   workspace, the emoji as its photo (`preference: emoji`). `metadata.large_language_model` is
 *   left unset: the model that wrote the agent is not necessarily the one it should run on.
 * - Faults of the model's provider: 502 (`UpstreamError`), 504 when it does not answer within
 *   `LLM_TIMEOUT_MS` (`UpstreamTimeoutError`); nothing is stored either way.
 */
import { z } from 'zod'
import { bindableTools, type BindableTool } from '../access/references.ts'
import { checkWith, costOf, generateStructured, issueLines, type Checked } from '../models/index.ts'
import { meteredCall, spendScopeOf, type CallTokens } from '../usage/index.ts'
import { UpstreamError } from '../platform/errors.ts'
import {
  CreateAgentInput,
  generatedAgent,
  type TCreateAgentInput,
  type TGenerateAgentInput,
  type TGeneratedAgent,
} from './agent-input.schema.ts'
import { DISC_PERSONALITIES, OPENAI_VOICES, type TAgent } from './agent.schema.ts'
import { resolveFor } from '../models/index.ts'
import { create } from './agents.service.ts'
import type { ResourceCtx } from '../context.ts'

/** Most output tokens asked of the model for one agent. */
const MAX_OUTPUT_TOKENS = 8_192
/** Most tools offered to the model; the prompt stays small in a workspace with hundreds. */
export const MAX_OFFERED_TOOLS = 100
/** Characters of a tool's description shown to the model. */
const TOOL_DESCRIPTION_MAX = 300

/** The instructions; the offered tools follow them. */
const INSTRUCTIONS = `You design AI assistants ("agents") for a workspace. From the user's description, write one complete agent as a JSON object:
- name: a short name.
- description: one or two sentences on what the agent does, for people choosing an agent.
- instruction: the agent's system prompt, in the second person ("You are ..."): its task, how it works step by step, what it asks the user for, how it formats its answers.
- metadata.role: its role in a few words. metadata.goal_statement: what it aims to achieve. metadata.backstory: a short background that shapes its expertise. metadata.guardrails: what it must not do, and when it hands over to a human. metadata.base_instructions: the rules it always follows. metadata.conversation_starters: 3 to 5 first messages a user might send it. metadata.greetings: its first message to a user. metadata.tone_of_voice: a few words.
- metadata.disc_personality: one of ${DISC_PERSONALITIES.join(', ')}. metadata.openai_voice: one of ${OPENAI_VOICES.join(', ')}.
- profile_photo_config.emoji: one emoji that fits the agent; profile_photo_config.background_color: a colour as #RRGGBB that goes with it.
- tools: the tools the agent needs, only from the list below, as [{"tool_uuid": "<uuid>"}]; [] when none fits.
Write every text in the language of the description.`

/** The system prompt: the instructions and the tools the model may choose from. */
function system(offered: BindableTool[]): string {
  if (!offered.length) return `${INSTRUCTIONS}\nThere are no tools to choose from: answer "tools": [].`
  const tools = offered.map((tool) => ({
    uuid: tool.uuid,
    name: tool.name,
    description: Array.from(tool.description).slice(0, TOOL_DESCRIPTION_MAX).join(''),
  }))
  return `${INSTRUCTIONS}\nThe tools to choose from, as JSON (uuid, name, description):\n${JSON.stringify(tools)}`
}

/** The create input an answer makes: only offered tools, each once, with the account it needs. */
function createInputOf(agent: TGeneratedAgent, offered: Map<string, BindableTool>): z.input<typeof CreateAgentInput> {
  const tools: { tool_uuid: string; account_uuid?: string }[] = []
  const bound = new Set<string>()
  for (const { tool_uuid } of agent.tools) {
    const tool = offered.get(tool_uuid.toLowerCase())
    if (!tool || bound.has(tool.uuid)) continue
    bound.add(tool.uuid)
    tools.push(tool.accountUuid ? { tool_uuid: tool.uuid, account_uuid: tool.accountUuid } : { tool_uuid: tool.uuid })
  }
  return {
    name: agent.name,
    description: agent.description,
    instruction: agent.instruction,
    visibility: 'private',
    profile_photo_config: { ...agent.profile_photo_config, preference: 'emoji' },
    metadata: agent.metadata,
    tools,
  }
}

/** Judges a parsed answer: the shape of a complete agent, then the create input it makes. */
function checkerFor(offered: BindableTool[]): (value: unknown) => Checked<TCreateAgentInput> {
  const byUuid = new Map(offered.map((tool) => [tool.uuid.toLowerCase(), tool]))
  const shape = generatedAgent()
  return (value) => {
    const answer = checkWith(shape, value)
    return answer.ok ? checkWith(CreateAgentInput, createInputOf(answer.value, byUuid)) : answer
  }
}

/** The shape the model is shown: tools only among the offered uuids (none when nothing is offered). */
function shownShape(offered: BindableTool[]) {
  const [first, ...rest] = offered.map((tool) => tool.uuid)
  return generatedAgent(first === undefined ? z.never() : z.enum([first, ...rest]))
}

/**
 * Generates and stores an agent from `input.description` (module comment); answers 201's
 * `{data: Agent}`, the agent as `GET /api/v1/agents/{agent_uuid}` answers it.
 * @throws ValidationError naming `large_language_model` (unknown, without a credential, or the
 *   local test model); UpstreamError (502) when the provider fails or the repaired answer is still
 *   not a valid agent (the problems in the message); UpstreamTimeoutError (504) past
 *   `LLM_TIMEOUT_MS`, or once `signal` aborted (the client disconnected: no one reads the answer,
 *   and nothing is stored).
 */
export async function generateAgent(ctx: ResourceCtx, input: TGenerateAgentInput, signal?: AbortSignal): Promise<{ data: TAgent }> {
  const model = await resolveFor(ctx, input.large_language_model ?? null, ['large_language_model'])
  const offered = await bindableTools(ctx, MAX_OFFERED_TOOLS)
  const metered = { slug: model.llm.slug, costOf: (tokens: CallTokens) => costOf(model.llm, tokens) }
  const checked = await meteredCall(ctx, spendScopeOf(ctx, null), metered, (onUsage) =>
    generateStructured(model, ctx.config, {
      onUsage,
      name: 'agent',
      shape: shownShape(offered),
      system: system(offered),
      prompt: input.description,
      check: checkerFor(offered),
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      task: 'design an agent',
      modelField: ['large_language_model'],
      signal,
    }),
  )
  if (!checked.ok) {
    throw new UpstreamError(`The model did not produce a valid agent, also after one repair:\n${issueLines(checked.issues)}`)
  }
  return create(ctx, checked.value)
}
