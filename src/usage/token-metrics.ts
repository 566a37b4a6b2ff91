/**
 * `gen_ai_tokens_total{model, direction}` (docs/operations.md, "Metrics"): the tokens of every
 * model call the service makes, as the provider reported them: a run's steps
 * (src/runs/model-stream.ts) and the calls made outside runs, metered by `recordCallUsage`
 * (./spend.ts: generation, thread names, memory extraction, knowledge embeddings). `model` is
 * the catalog slug (`gpt-4o-mini`), or an embedding model's key (`openai/text-embedding-3-small`),
 * as the usage rollup names it; `direction` is `input` (the prompt) or `output` (the completion).
 */
import { counter } from '../platform/prometheus.ts'

const tokens = counter({
  name: 'gen_ai_tokens_total',
  help: 'Tokens of model calls as the provider reported them, by model and direction (input: the prompt, output: the completion)',
  labelNames: ['model', 'direction'] as const,
})

/** Adds one model call's tokens (`input` prompt tokens, `output` completion tokens) for `model`. */
export function countTokens(model: string, input: number, output: number): void {
  if (input > 0) tokens.inc({ model, direction: 'input' }, input)
  if (output > 0) tokens.inc({ model, direction: 'output' }, output)
}
