/**
 * The runs' Prometheus metrics (docs/operations.md, "Metrics"):
 *
 * - `runs_total{status}`: runs that reached a final status (`succeeded`, `failed`, `canceled`),
 *   counted as their final event is published (./run-bus.ts). Every ending stores exactly one
 *   final event and the process that stored it publishes it once, whoever ended the run: its
 *   executor, a cancel of a run that waited, the sweep of a run whose process died. So a run
 *   counts once across all processes, where it ended.
 * - `run_duration_seconds`: how long an execution that ended its run took here, from its start
 *   to its end (./run-manager.ts). A run that waited for an approval counts from its
 *   resumption; an execution handed over at shutdown or taken over by another process is not
 *   observed (the run ends elsewhere).
 * - `tool_calls_total`: tool calls the runs made (HTTP, MCP and workflow tools), each counted when
 *   its result or error came back (./model-stream.ts); a provider's own tool (its web search) is
 *   the provider's, not counted. A call a person denied counts too: the model gets its refusal
 *   as the call's result.
 *
 * The tokens of run steps go to `gen_ai_tokens_total`, which the usage capability owns.
 */
import { counter, histogram } from '../platform/prometheus.ts'
import { countTokens } from '../usage/index.ts'

/** A run's final status by the type of its final event. */
const FINAL_STATUS = new Map([
  ['run.succeeded', 'succeeded'],
  ['run.failed', 'failed'],
  ['run.canceled', 'canceled'],
])

const runs = counter(
  {
    name: 'runs_total',
    help: 'Runs that reached a final status, by status (succeeded, failed, canceled)',
    labelNames: ['status'] as const,
  },
  { label: 'status', values: FINAL_STATUS.values() },
)

const durations = histogram({
  name: 'run_duration_seconds',
  help: 'Seconds an execution that ended its run took, from its start to its end',
  // Runs answer in about a second with a fast model and a short prompt, in minutes with tools and
  // long answers; LLM_TIMEOUT_MS is 120 s by default.
  buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120],
})

const toolCalls = counter({
  name: 'tool_calls_total',
  help: 'Tool calls the runs made (HTTP, MCP and workflow tools), counted when their result or error came back',
})

/** Counts the runs whose final event is among `events` (called where every stored event is published, ./run-bus.ts). */
export function countRunEndings(events: readonly { type: string }[]): void {
  for (const event of events) {
    const status = FINAL_STATUS.get(event.type)
    if (status) runs.inc({ status })
  }
}

/**
 * Observes how long an execution took (`ms`, milliseconds) when its `outcome` (./run-types.ts,
 * `RunOutcome`) ended the run here; one that waits for an approval, was handed over at shutdown,
 * or that another process took over (`interrupted`) is left out.
 */
export function observeRunDuration(outcome: { status: string; error: { code: string } | null }, ms: number): void {
  if (outcome.status !== 'succeeded' && outcome.status !== 'failed' && outcome.status !== 'canceled') return
  if (outcome.error?.code === 'interrupted') return
  durations.observe(ms / 1000)
}

/** What {@link countModelPart} reads of a part of the model's answer (./model-stream.ts, `ModelPart`). */
interface AnswerPart {
  type: string
  /** Of a `step-end`. */
  inputTokens?: number
  outputTokens?: number
  /** Of a `tool-result` or `tool-error`. */
  providerExecuted?: boolean
}

/** Counts what one part of a run's model answer used: a step's tokens (`model`: the catalog slug), a tool call that came back. */
export function countModelPart(model: string, part: AnswerPart): void {
  if (part.type === 'step-end') countTokens(model, part.inputTokens ?? 0, part.outputTokens ?? 0)
  else if ((part.type === 'tool-result' || part.type === 'tool-error') && part.providerExecuted !== true) toolCalls.inc()
}
