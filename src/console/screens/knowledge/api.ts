/**
 * The knowledge area's data: an agent's documents (`knowledge.list`), read again every 2 s while
 * one shown is queued or processing (or a sync was just asked for), a document's chunks
 * (`knowledge.chunks`), and what changes them: `knowledge.train`, `knowledge.retry`,
 * `knowledge.update` (a URL's refresh), `knowledge.sync`, `knowledge.delete`, each of which marks
 * the document lists stale; and the upload of the files
 * to train from (`POST /api/v1/media` through ../../lib/upload.ts, the one call that is not
 * tRPC). The agents to pick from come from ../agents/api.ts.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import type { Problem, RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'
import { uploadFile, UploadError, uploadProblemOf, type Upload } from '../../lib/upload.ts'

export type DocumentsInput = RouterInputs['knowledge']['list']
export type Document = RouterOutputs['knowledge']['list']['data'][number]
export type Chunk = RouterOutputs['knowledge']['chunks']['data'][number]
export type Refresh = Document['refresh']
type Inputs = RouterInputs['knowledge']
type Outputs = RouterOutputs['knowledge']

/** The refreshes of a URL document (docs/api/knowledge.md), as the refresh pickers offer them. */
export const REFRESH_OPTIONS: { value: Refresh; label: string }[] = [
  { value: 'never', label: 'Never' },
  { value: 'hourly', label: 'Hourly' },
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
]

/** How often an unfinished training is looked at again. */
const REFRESH_MS = 2_000

/** True while the document is still being ingested. */
export const unfinished = (document: Document) => document.status === 'queued' || document.status === 'processing'

/**
 * One page of an agent's documents; the previous page stays shown while the next loads.
 * @param watchUntil epoch ms until which the list is read again every 2 s even when every document
 *   is ready: a sync keeps its document `ready`, so only its `last_synced_at` or `sync_error` tells it ended.
 */
export const documentsQueryOptions = (trpc: TRPC, input: DocumentsInput, watchUntil = 0) =>
  trpc.knowledge.list.queryOptions(input, {
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.data.some(unfinished) || Date.now() < watchUntil ? REFRESH_MS : false),
  })

export function useDocuments(input: DocumentsInput, watchUntil?: number) {
  return useQuery(documentsQueryOptions(useTRPC(), input, watchUntil))
}

/** One page of a document's chunks, in document order; the previous page stays shown while the next loads. */
export function useChunks(documentUuid: string | null, page: number) {
  const trpc = useTRPC()
  return useQuery({
    ...trpc.knowledge.chunks.queryOptions({ document_uuid: documentUuid ?? '', page, per_page: 10 }, { placeholderData: keepPreviousData }),
    enabled: documentUuid !== null,
  })
}

/** Marks the document lists of one agent stale. */
function useRefreshDocuments() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (agentUuid: string) => void queryClient.invalidateQueries(trpc.knowledge.list.queryFilter({ agent_uuid: agentUuid }))
}

/** Trains the agent from sources; the service answers at once with the documents queued. */
export function useTrain(config?: MutationConfig<Outputs['train'], Inputs['train']>) {
  const refresh = useRefreshDocuments()
  return useMutation(
    useTRPC().knowledge.train.mutationOptions(
      updatingCache(config, (answer, input) => {
        refresh(input.agent_uuid)
      }),
    ),
  )
}

/** Ingests a failed document again. */
export function useRetryDocument(config?: MutationConfig<Outputs['retry'], Inputs['retry']>) {
  const refresh = useRefreshDocuments()
  return useMutation(
    useTRPC().knowledge.retry.mutationOptions(
      updatingCache(config, (answer) => {
        refresh(answer.data.agent_uuid)
      }),
    ),
  )
}

/** Changes how often a URL document is synced with its page. */
export function useUpdateDocument(config?: MutationConfig<Outputs['update'], Inputs['update']>) {
  const refresh = useRefreshDocuments()
  return useMutation(
    useTRPC().knowledge.update.mutationOptions(
      updatingCache(config, (answer) => {
        refresh(answer.data.agent_uuid)
      }),
    ),
  )
}

/** Syncs a URL document with its page now (202: the sync runs in the job queue). */
export function useSyncDocument(config?: MutationConfig<Outputs['sync'], Inputs['sync']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.knowledge.sync.mutationOptions(
      updatingCache(config, (answer) => {
        void queryClient.invalidateQueries(trpc.knowledge.list.queryFilter({ agent_uuid: answer.data.agent_uuid }))
        void queryClient.invalidateQueries(trpc.knowledge.chunks.queryFilter({ document_uuid: answer.data.uuid }))
      }),
    ),
  )
}

/** Deletes a document with its chunks; every document list is stale (the deleted one's agent is not in the answer). */
export function useDeleteDocument(config?: MutationConfig<Outputs['delete'], Inputs['delete']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useMutation(
    trpc.knowledge.delete.mutationOptions(
      updatingCache(config, () => {
        void queryClient.invalidateQueries(trpc.knowledge.list.pathFilter())
      }),
    ),
  )
}

/**
 * Uploads files one after another, each handed to `onUploaded` as soon as it is stored, so a
 * refused one loses none of the others; the refusals, if any, end the batch as one
 * {@link UploadError} saying each.
 */
export function useUploadFiles(onUploaded: (name: string, upload: Upload) => void) {
  return useMutation({
    mutationFn: async (files: File[]) => {
      const refused: Problem[] = []
      for (const file of files) {
        try {
          onUploaded(file.name, await uploadFile(file))
        } catch (error) {
          refused.push(uploadProblemOf(error))
        }
      }
      if (refused.length) throw new UploadError({ ...refused[0]!, message: refused.map((problem) => problem.message).join(' ') })
    },
  })
}
