/**
 * What the evaluations capability adds to the service context's dependencies (src/context.ts,
 * `ServiceDeps`), by declaration merging.
 */
import type { EvaluationEngine } from './engine.ts'

/** What services call on the evaluation engine (./engine.ts): queue an evaluation's job. */
export type EvaluationsPort = Pick<EvaluationEngine, 'send'>

declare module '../context.ts' {
  interface ServiceDeps {
    evaluations: EvaluationsPort
  }
}
