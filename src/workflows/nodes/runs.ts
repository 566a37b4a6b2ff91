/**
 * The run prompt and run agent nodes (docs/api/resources.md and docs/api/workflows.md): a run of a prompt
 * or an agent through the engine's `WorkflowServices` port (the run service), as the
 * execution's user in the workflow's workspace (so with that user's access checks, models and
 * credentials), waiting for its end.
 * Service errors become NodeErrors: what a retry cannot fix (not found, forbidden, invalid input)
 * is not retryable; upstream failures are. When the execution is canceled or times out, the run is
 * canceled too (it ends `canceled`).
 */
import { z } from 'zod'
import {
  AppError,
  ForbiddenError,
  NotFoundError,
  TooManyRequestsError,
  UpstreamError,
  UpstreamTimeoutError,
  ValidationError,
} from '../../platform/errors.ts'
import { RUN_INPUT_MAX, type TRunResult } from '../../runs/index.ts'
import { text } from '../../access/wire.ts'
import { expr } from '../expressions.ts'
import { NodeError, type NodeType } from '../types.ts'

/** A service error as a NodeError; anything else is rethrown (the executor reports it as internal). */
function nodeError(error: unknown): unknown {
  if (error instanceof NotFoundError) return new NodeError('not_found', error.message, false)
  if (error instanceof ForbiddenError) return new NodeError('forbidden', error.message, false)
  if (error instanceof ValidationError) {
    const issue = error.issues[0]
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : ''
    return new NodeError('invalid_parameters', `${where}${error.message}`, false)
  }
  if (error instanceof UpstreamError || error instanceof UpstreamTimeoutError) return new NodeError('upstream', error.message)
  if (error instanceof TooManyRequestsError) return new NodeError('rate_limited', error.message)
  // 409 and the rest: the state a retry would meet again (a credential whose key is gone).
  if (error instanceof AppError) return new NodeError('run_failed', error.message, false)
  return error
}

/** The part of a run's answer a workflow uses. */
const summary = (result: TRunResult) => ({ text: result.data.run.output, run_uuid: result.data.run.uuid, usage: result.data.usage })

const PromptParams = z.strictObject({
  prompt_uuid: z.uuid(),
  input: expr(z.record(z.string(), z.unknown())).optional().meta({ description: "The prompt's inputs (expressions anywhere)" }),
  model: text(120, 1).optional().meta({ description: 'A model slug; default: the default model' }),
})
type TPromptParams = z.infer<typeof PromptParams>

/** `run_prompt`: output `{text, run_uuid, usage}`. */
export const runPromptNode: NodeType<TPromptParams> = {
  type: 'run_prompt',
  label: 'Run prompt',
  description: "Runs a prompt with inputs and waits for the model's answer; outputs {text, run_uuid, usage}.",
  kind: 'action',
  parameters: PromptParams,
  outputs: () => null,
  execute: async ({ params, services, actor, signal }) => {
    if (typeof params.input === 'string') throw new NodeError('invalid_parameters', 'input: the expression must answer an object', false)
    try {
      const result = await services.runPrompt(
        actor,
        {
          prompt_uuid: params.prompt_uuid,
          input: params.input ?? {},
          large_language_model: params.model,
          background: false,
        },
        signal,
      )
      return { output: summary(result) }
    } catch (error) {
      throw nodeError(error)
    }
  },
}

const AgentParams = z.strictObject({
  agent_uuid: z.uuid(),
  message: expr(text(RUN_INPUT_MAX, 1)).meta({ description: 'The message sent to the agent' }),
  thread_uuid: expr(z.uuid()).optional().meta({ description: 'A thread of the agent to continue; default: a new thread' }),
})
type TAgentParams = z.infer<typeof AgentParams>

/** `run_agent`: output `{text, thread_uuid, run_uuid, usage}`. */
export const runAgentNode: NodeType<TAgentParams> = {
  type: 'run_agent',
  label: 'Run agent',
  description:
    'Sends a message to an agent (in a new thread or a given one) and waits for its answer; outputs {text, thread_uuid, run_uuid, usage}.',
  kind: 'action',
  parameters: AgentParams,
  outputs: () => null,
  execute: async ({ params, services, actor, signal, execution }) => {
    try {
      const result = await services.runAgent(
        actor,
        {
          agent_uuid: params.agent_uuid,
          input: params.message,
          thread_uuid: params.thread_uuid,
          background: false,
        },
        signal,
        { toolDepth: execution.toolDepth ?? 0 },
      )
      return { output: { ...summary(result), thread_uuid: result.data.run.thread_uuid } }
    } catch (error) {
      throw nodeError(error)
    }
  },
}
