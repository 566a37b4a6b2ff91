/**
 * The evaluations area's data (docs/api/evaluations.md): datasets (`datasets.list`, `.retrieve`,
 * `.create`, `.update`, `.delete`) and their items (`datasets.items.list`, `.create`, `.update`,
 * `.delete`); evaluations (`evaluations.list`, `.retrieve`, `.results`, `.create`, `.cancel`) and
 * the comparison of two (`evaluations.compare`). JSON Lines files of items are uploaded
 * (`POST /api/v1/media`, ../../lib/upload.ts) before `datasets.items.create` adds them by key.
 *
 * A change to a dataset or its items marks the datasets' queries stale (an item changes its
 * dataset's `items_count` and `updated_at`). An evaluation and its results are read again every
 * 2 s while it is queued or running; a cancel stores the evaluation answered.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef } from 'react'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { uploadFile, type Upload } from '../../lib/upload.ts'
import { useSubmission, useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

type DatasetInputs = RouterInputs['datasets']
type DatasetOutputs = RouterOutputs['datasets']
type EvalInputs = RouterInputs['evaluations']
type EvalOutputs = RouterOutputs['evaluations']

export type DatasetsInput = Exclude<DatasetInputs['list'], void | undefined>
export type Dataset = DatasetOutputs['retrieve']['data']
export type DatasetItem = DatasetOutputs['items']['list']['data'][number]
export type EvaluationsInput = Exclude<EvalInputs['list'], void | undefined>
export type Evaluation = EvalOutputs['retrieve']['data']
export type EvaluationResult = EvalOutputs['results']['data'][number]
export type Comparison = EvalOutputs['compare']['data']
export type ScorerSpec = Evaluation['scorers'][number]

/** How often an evaluation that has not ended is read again. */
const EVALUATION_REFRESH_MS = 2000

export const unfinished = (evaluation: Evaluation | undefined) => evaluation?.status === 'queued' || evaluation?.status === 'running'

export const datasetsQueryOptions = (trpc: TRPC, input: DatasetsInput) =>
  trpc.datasets.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useDatasets(input: DatasetsInput) {
  return useQuery(datasetsQueryOptions(useTRPC(), input))
}

export const datasetQueryOptions = (trpc: TRPC, datasetUuid: string) => trpc.datasets.retrieve.queryOptions({ dataset_uuid: datasetUuid })

export function useDataset(datasetUuid: string) {
  return useQuery(datasetQueryOptions(useTRPC(), datasetUuid))
}

export const datasetItemsQueryOptions = (trpc: TRPC, datasetUuid: string, page: number) =>
  trpc.datasets.items.list.queryOptions({ dataset_uuid: datasetUuid, page, per_page: 20 }, { placeholderData: keepPreviousData })

export function useDatasetItems(datasetUuid: string, page: number) {
  return useQuery(datasetItemsQueryOptions(useTRPC(), datasetUuid, page))
}

/** Marks every dataset query stale (lists, the dataset, its items). */
function useRefreshDatasets() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return () => void queryClient.invalidateQueries(trpc.datasets.pathFilter())
}

export function useCreateDataset(config?: MutationConfig<DatasetOutputs['create'], DatasetInputs['create']>) {
  const refresh = useRefreshDatasets()
  return useSubmission(useTRPC().datasets.create.mutationOptions(updatingCache(config, refresh)))
}

export function useUpdateDataset(config?: MutationConfig<DatasetOutputs['update'], DatasetInputs['update']>) {
  const refresh = useRefreshDatasets()
  return useSubmission(useTRPC().datasets.update.mutationOptions(updatingCache(config, refresh)))
}

export function useDeleteDataset(config?: MutationConfig<DatasetOutputs['delete'], DatasetInputs['delete']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.datasets.delete.mutationOptions(
      updatingCache(config, (_answer, input) => {
        queryClient.removeQueries(trpc.datasets.retrieve.queryFilter({ dataset_uuid: input.dataset_uuid }))
        void queryClient.invalidateQueries(trpc.datasets.list.pathFilter())
      }),
    ),
  )
}

export function useAddItems(config?: MutationConfig<DatasetOutputs['items']['create'], DatasetInputs['items']['create']>) {
  const refresh = useRefreshDatasets()
  return useSubmission(useTRPC().datasets.items.create.mutationOptions(updatingCache(config, refresh)))
}

/**
 * Uploads JSON Lines files of items one after another and answers the stored uploads, in order;
 * the first refusal is thrown (an UploadError), and nothing is added until `useAddItems` is called
 * with their keys.
 */
export function useUploadItemFiles() {
  return useMutation({
    mutationFn: async (files: File[]) => {
      const uploads: { name: string; upload: Upload }[] = []
      for (const file of files) uploads.push({ name: file.name, upload: await uploadFile(file) })
      return uploads
    },
  })
}

export function useUpdateItem(config?: MutationConfig<DatasetOutputs['items']['update'], DatasetInputs['items']['update']>) {
  const refresh = useRefreshDatasets()
  return useSubmission(useTRPC().datasets.items.update.mutationOptions(updatingCache(config, refresh)))
}

export function useDeleteItem(config?: MutationConfig<DatasetOutputs['items']['delete'], DatasetInputs['items']['delete']>) {
  const refresh = useRefreshDatasets()
  return useMutation(useTRPC().datasets.items.delete.mutationOptions(updatingCache(config, refresh)))
}

/** A page of evaluations, newest first; read again every 2 s while one shown has not ended. */
export const evaluationsQueryOptions = (trpc: TRPC, input: EvaluationsInput) =>
  trpc.evaluations.list.queryOptions(input, {
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.data.some(unfinished) ? EVALUATION_REFRESH_MS : false),
  })

export function useEvaluations(input: EvaluationsInput) {
  return useQuery(evaluationsQueryOptions(useTRPC(), input))
}

/** One evaluation, read again every 2 s while it is queued or running. */
export const evaluationQueryOptions = (trpc: TRPC, evaluationUuid: string) =>
  trpc.evaluations.retrieve.queryOptions(
    { evaluation_uuid: evaluationUuid },
    { refetchInterval: (query) => (unfinished(query.state.data?.data) ? EVALUATION_REFRESH_MS : false) },
  )

export function useEvaluation(evaluationUuid: string) {
  return useQuery(evaluationQueryOptions(useTRPC(), evaluationUuid))
}

/** A page of an evaluation's results, read again with it while it has not ended (`live`). */
export const resultsQueryOptions = (trpc: TRPC, evaluationUuid: string, page: number, live: boolean) =>
  trpc.evaluations.results.queryOptions(
    { evaluation_uuid: evaluationUuid, page, per_page: 20 },
    { placeholderData: keepPreviousData, refetchInterval: live ? EVALUATION_REFRESH_MS : false },
  )

/**
 * The results of `evaluation`, page `page`: read again every 2 s while it has not ended, and
 * once more whenever its progress or status (read every 2 s too) changes, so the last item
 * finished before it ended is shown.
 */
export function useResults(evaluation: Evaluation, page: number) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const { uuid, status } = evaluation
  const { done } = evaluation.progress
  const seen = useRef(`${status}/${done}`)
  useEffect(() => {
    if (seen.current === `${status}/${done}`) return
    seen.current = `${status}/${done}`
    void queryClient.invalidateQueries(trpc.evaluations.results.queryFilter({ evaluation_uuid: uuid }))
  }, [queryClient, trpc, uuid, status, done])
  return useQuery(resultsQueryOptions(trpc, uuid, page, unfinished(evaluation)))
}

export const comparisonQueryOptions = (trpc: TRPC, base: string, candidate: string) =>
  trpc.evaluations.compare.queryOptions({ base, candidate })

export function useComparison(base: string, candidate: string) {
  return useQuery(comparisonQueryOptions(useTRPC(), base, candidate))
}

/** Stores an evaluation answered as its cached record and marks the lists and its results stale. */
function useStoreEvaluation() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (answer: EvalOutputs['retrieve']) => {
    queryClient.setQueryData(trpc.evaluations.retrieve.queryKey({ evaluation_uuid: answer.data.uuid }), answer)
    void queryClient.invalidateQueries(trpc.evaluations.list.pathFilter())
    void queryClient.invalidateQueries(trpc.evaluations.results.pathFilter())
  }
}

export function useCreateEvaluation(config?: MutationConfig<EvalOutputs['create'], EvalInputs['create']>) {
  const store = useStoreEvaluation()
  return useSubmission(useTRPC().evaluations.create.mutationOptions(updatingCache(config, store)))
}

export function useCancelEvaluation(config?: MutationConfig<EvalOutputs['cancel'], EvalInputs['cancel']>) {
  const store = useStoreEvaluation()
  return useMutation(useTRPC().evaluations.cancel.mutationOptions(updatingCache(config, store)))
}

/** A scorer in words: `regex /^Paris/`, `contains "x"`, `max_latency_ms ≤ 5000`. */
export function scorerLabel(scorer: ScorerSpec): string {
  switch (scorer.type) {
    case 'contains':
      return scorer.value ? `contains "${scorer.value}"` : 'contains expected'
    case 'regex':
      return `regex /${scorer.pattern}/`
    case 'max_latency_ms':
      return `latency ≤ ${scorer.value} ms`
    case 'max_cost':
      return `cost ≤ $${scorer.value}`
    default:
      return scorer.type
  }
}
