/**
 * The agents area's data: the list (`agents.list`), one agent (`agents.retrieve`), and what
 * changes one: `agents.create`, `agents.update`, `agents.delete`, `agents.share`,
 * `agents.favorite` / `agents.unfavorite`; an agent's versions (`agents.versions`, `agents.version`)
 * and what changes them (`agents.annotateVersion`, `agents.restoreVersion`); an agent's portable
 * document (`agents.export`) and an agent made from one (`agents.import`). Also the agents as a picker's choices (the first 100
 * by name: the command room, metrics and knowledge pick from them), and the catalogues the agent
 * form picks from: `largeLanguageModels.list`, `workflows.list`, `categories.list`, `tools.list`,
 * `accounts.list`.
 *
 * A change stores the agent the service answered as the cached record (so its screen shows it at
 * once) and marks every agents list stale, and that agent's versions list (a save or a restore may
 * have made a version); a deletion drops the record. A note's answer is the version's cached
 * record, in its list's pages too. An import also marks the tools and workflows lists stale (it
 * makes the document's).
 */
import { keepPreviousData, skipToken, useQuery, useQueryClient } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useSubmission, useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

export type AgentsInput = Exclude<RouterInputs['agents']['list'], void | undefined>
type AgentAnswer = RouterOutputs['agents']['retrieve']
type AgentRef = RouterInputs['agents']['retrieve']

/** One page of agents; the previous page stays shown while the next loads. */
export const agentsQueryOptions = (trpc: TRPC, input: AgentsInput) =>
  trpc.agents.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useAgents(input: AgentsInput) {
  return useQuery(agentsQueryOptions(useTRPC(), input))
}

/** The agents a picker offers: the first 100 by name (read while `enabled`). */
export const agentChoicesQueryOptions = (trpc: TRPC, enabled = true) =>
  trpc.agents.list.queryOptions({ per_page: 100, sort: 'name' }, { enabled })

export function useAgentChoices(enabled = true) {
  return useQuery(agentChoicesQueryOptions(useTRPC(), enabled))
}

/** One agent; nothing is read while `agentUuid` is null. */
export const agentQueryOptions = (trpc: TRPC, agentUuid: string | null) =>
  trpc.agents.retrieve.queryOptions(agentUuid === null ? skipToken : { agent_uuid: agentUuid })

export function useAgent(agentUuid: string | null) {
  return useQuery(agentQueryOptions(useTRPC(), agentUuid))
}

/** After a change answered with the agent: it is the cached record, and every list (its versions too) is stale. */
function useStoreAgent() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return (answer: AgentAnswer) => {
    void queryClient.invalidateQueries(trpc.agents.list.pathFilter())
    void queryClient.invalidateQueries(trpc.agents.versions.queryFilter({ agent_uuid: answer.data.uuid }))
    queryClient.setQueryData(trpc.agents.retrieve.queryKey({ agent_uuid: answer.data.uuid }), answer)
  }
}

export function useCreateAgent(config?: MutationConfig<AgentAnswer, RouterInputs['agents']['create']>) {
  const trpc = useTRPC()
  const store = useStoreAgent()
  return useSubmission(trpc.agents.create.mutationOptions(updatingCache(config, store)))
}

export function useUpdateAgent(config?: MutationConfig<AgentAnswer, RouterInputs['agents']['update']>) {
  const trpc = useTRPC()
  const store = useStoreAgent()
  return useSubmission(trpc.agents.update.mutationOptions(updatingCache(config, store)))
}

/** Shares the agent, changes or removes a share; the answer (with its shares) is the cached record. */
export function useShareAgent(config?: MutationConfig<AgentAnswer, RouterInputs['agents']['share']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission(
    trpc.agents.share.mutationOptions(
      updatingCache(config, (answer, input) => {
        queryClient.setQueryData(trpc.agents.retrieve.queryKey({ agent_uuid: input.agent_uuid }), answer)
      }),
    ),
  )
}

export function useDeleteAgent(config?: MutationConfig<void, AgentRef>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission(
    trpc.agents.delete.mutationOptions(
      updatingCache(config, (answer, input) => {
        queryClient.removeQueries(trpc.agents.retrieve.queryFilter(input))
        void queryClient.invalidateQueries(trpc.agents.list.pathFilter())
      }),
    ),
  )
}

/**
 * Adds `agent` to the caller's favourites (`agents.favorite`) or takes it out
 * (`agents.unfavorite`), whichever it is not: the mutation to call with `{ agent_uuid }`. The
 * cached record says the new state at once; the lists (a favourites filter) are read again.
 */
export function useFavoriteToggle(agent: { uuid: string; is_favorite: boolean }, config?: MutationConfig<void, AgentRef>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const settled = (isFavorite: boolean) => (answer: void, input: AgentRef) => {
    queryClient.setQueryData(trpc.agents.retrieve.queryKey(input), (old) => old && { data: { ...old.data, is_favorite: isFavorite } })
    void queryClient.invalidateQueries(trpc.agents.list.pathFilter())
    return config?.onSuccess?.(answer, input)
  }
  const favorite = useSubmission(trpc.agents.favorite.mutationOptions({ onSuccess: settled(true), onError: config?.onError }))
  const unfavorite = useSubmission(trpc.agents.unfavorite.mutationOptions({ onSuccess: settled(false), onError: config?.onError }))
  return agent.is_favorite ? unfavorite : favorite
}

export type VersionsInput = RouterInputs['agents']['versions']
export type Version = RouterOutputs['agents']['versions']['data'][number]
export type VersionDetail = RouterOutputs['agents']['version']['data']
type VersionRef = RouterInputs['agents']['version']

/** One page of an agent's versions, newest first; the previous page stays shown while the next loads. */
export const versionsQueryOptions = (trpc: TRPC, input: VersionsInput) =>
  trpc.agents.versions.queryOptions(input, { placeholderData: keepPreviousData })

export function useVersions(input: VersionsInput) {
  return useQuery(versionsQueryOptions(useTRPC(), input))
}

/** One version with its snapshot (a snapshot never changes); nothing is read while `ref` is null. */
export const versionQueryOptions = (trpc: TRPC, ref: VersionRef | null) =>
  trpc.agents.version.queryOptions(ref ?? skipToken, { staleTime: 60_000 })

export function useVersion(ref: VersionRef | null) {
  return useQuery(versionQueryOptions(useTRPC(), ref))
}

/** Sets or removes a version's note: the answer replaces that version in the cached lists and record. */
export function useAnnotateVersion(
  config?: MutationConfig<RouterOutputs['agents']['annotateVersion'], RouterInputs['agents']['annotateVersion']>,
) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission(
    trpc.agents.annotateVersion.mutationOptions(
      updatingCache(config, (answer, input) => {
        const version = answer.data
        queryClient.setQueriesData<RouterOutputs['agents']['versions']>(
          trpc.agents.versions.queryFilter({ agent_uuid: input.agent_uuid }),
          (old) => (old ? { ...old, data: old.data.map((row) => (row.version === version.version ? version : row)) } : old),
        )
        queryClient.setQueryData(trpc.agents.version.queryKey({ agent_uuid: input.agent_uuid, version: version.version }), (old) =>
          old ? { data: { ...old.data, ...version } } : old,
        )
      }),
    ),
  )
}

/** Restores a version: the agent answered is the cached record, and its versions list is read again (the restore is one). */
export function useRestoreVersion(config?: MutationConfig<AgentAnswer, VersionRef>) {
  const trpc = useTRPC()
  const store = useStoreAgent()
  return useSubmission(trpc.agents.restoreVersion.mutationOptions(updatingCache(config, store)))
}

export type AgentDocument = RouterOutputs['agents']['export']
type ExportRef = RouterInputs['agents']['export']
export type ImportInput = RouterInputs['agents']['import']
export type ImportAnswer = RouterOutputs['agents']['import']

/**
 * Reads the agent's portable document afresh (`agents.export`, the document the REST route
 * answers as a download), for the screen to save as a file. Nothing is kept in the cache.
 */
export function useExportAgent(config?: MutationConfig<AgentDocument, ExportRef>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission({
    mutationFn: (input: ExportRef) => queryClient.fetchQuery({ ...trpc.agents.export.queryOptions(input), staleTime: 0, gcTime: 0 }),
    onSuccess: config?.onSuccess,
    onError: config?.onError,
  })
}

/** Makes an agent from a document: it is the cached record; the agents, tools and workflows lists are stale. */
export function useImportAgent(config?: MutationConfig<ImportAnswer, ImportInput>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const store = useStoreAgent()
  return useSubmission(
    trpc.agents.import.mutationOptions(
      updatingCache(config, (answer) => {
        store(answer)
        void queryClient.invalidateQueries(trpc.tools.list.pathFilter())
        void queryClient.invalidateQueries(trpc.workflows.list.pathFilter())
      }),
    ),
  )
}

/** Every catalogue the agent form picks from is read as one page of its largest size: enough for a picker. */
const PAGE = { per_page: 100 } as const

export const modelsQueryOptions = (trpc: TRPC) => trpc.largeLanguageModels.list.queryOptions(PAGE, { staleTime: 60_000 })

export function useModels() {
  return useQuery(modelsQueryOptions(useTRPC()))
}

export const workflowCatalogueQueryOptions = (trpc: TRPC) => trpc.workflows.list.queryOptions(PAGE, { staleTime: 30_000 })

export function useWorkflowCatalogue() {
  return useQuery(workflowCatalogueQueryOptions(useTRPC()))
}

export const categoriesQueryOptions = (trpc: TRPC) => trpc.categories.list.queryOptions(PAGE, { staleTime: 300_000 })

export function useCategories() {
  return useQuery(categoriesQueryOptions(useTRPC()))
}

export const toolsQueryOptions = (trpc: TRPC) => trpc.tools.list.queryOptions(PAGE, { staleTime: 30_000 })

export function useTools() {
  return useQuery(toolsQueryOptions(useTRPC()))
}

/** The accounts of one tool provider (the account a tool is called with). */
export const accountsQueryOptions = (trpc: TRPC, providerUuid: string) =>
  trpc.accounts.list.queryOptions({ ...PAGE, provider_uuid: providerUuid }, { staleTime: 30_000 })

export function useAccounts(providerUuid: string) {
  return useQuery(accountsQueryOptions(useTRPC(), providerUuid))
}
