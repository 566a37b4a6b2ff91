/**
 * Evaluations (docs/api/evaluations.md): a dataset run against an agent at a version and graded by
 * scorers, through the job queue; their results per item and the comparison of two of them.
 */
import { evaluations } from '../src/evaluations/index.ts'
import {
  CompareEvaluationsInput,
  CreateEvaluationInput,
  EvaluationComparison,
  EvaluationEnvelope,
  EvaluationList,
  EvaluationPathInput,
  EvaluationResultList,
  EvaluationResultsInput,
  ListEvaluationsInput,
} from '../src/evaluations/index.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Evaluations']
const path = '/api/v1/evaluations'

export const evaluationsRouter = router({
  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path, tags, summary: 'Evaluations the caller may read, newest first', protect: true } })
    .input(ListEvaluationsInput)
    .output(EvaluationList)
    .query(({ ctx, input }) => evaluations.list(ctx, input)),

  create: workspaceProcedure
    .meta({ openapi: { method: 'POST', path, tags, summary: 'Evaluate an agent on a dataset (runs in the background)', protect: true }, successStatus: 202 })
    .input(CreateEvaluationInput)
    .output(EvaluationEnvelope)
    .mutation(({ ctx, input }) => evaluations.create(ctx, input)),

  // Before `{evaluation_uuid}`: "compare" is no uuid, but the static path reads better first.
  compare: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/compare`, tags, summary: 'Compare two evaluations of one dataset', protect: true } })
    .input(CompareEvaluationsInput)
    .output(EvaluationComparison)
    .query(({ ctx, input }) => evaluations.compare(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/{evaluation_uuid}`, tags, summary: 'Retrieve an evaluation with its progress and summary', protect: true } })
    .input(EvaluationPathInput)
    .output(EvaluationEnvelope)
    .query(({ ctx, input }) => evaluations.retrieve(ctx, input.evaluation_uuid)),

  results: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${path}/{evaluation_uuid}/results`, tags, summary: "An evaluation's results per item, in dataset order", protect: true } })
    .input(EvaluationResultsInput)
    .output(EvaluationResultList)
    .query(({ ctx, input }) => evaluations.results(ctx, input)),

  cancel: workspaceProcedure
    .meta({ openapi: { method: 'POST', path: `${path}/{evaluation_uuid}/cancel`, tags, summary: 'Cancel an evaluation that has not ended', protect: true } })
    .input(EvaluationPathInput)
    .output(EvaluationEnvelope)
    .mutation(({ ctx, input }) => evaluations.cancel(ctx, input.evaluation_uuid)),
})
