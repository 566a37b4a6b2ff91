/**
 * The settings area's data: providers (`providers.*`), accounts with their write-only secrets
 * (`accounts.*`), the models and whether each has a credential (`largeLanguageModels.list`),
 * tools (`tools.*`), the caller's workspaces (`workspaces.*`) and a workspace's members
 * (`workspaces.members.*`), and the ways of signing in (`sso.providers`).
 *
 * An account saved or deleted changes which models have a credential, so it marks the models
 * list stale too (the agent form's model picker reads it). A workspace created, renamed or
 * deleted marks `workspaces.list` stale, which the header's switcher reads (lib/session.tsx).
 * Deleting a provider deletes its accounts and unbinds its tools, so those lists go stale as well.
 */
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useSubmission, useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

type Inputs = RouterInputs
type Outputs = RouterOutputs

export type Provider = Outputs['providers']['list']['data'][number]
export type Account = Outputs['accounts']['list']['data'][number]
export type Model = Outputs['largeLanguageModels']['list']['data'][number]
export type Tool = Outputs['tools']['list']['data'][number]
export type Workspace = Outputs['workspaces']['list']['data'][number]
export type Member = Outputs['workspaces']['members']['list']['data'][number]
export type Role = Member['role']

type Paged<Input> = Exclude<Input, void | undefined>

/** The pickers' catalogue: the first 100 by name (the most a page holds). */
const CATALOGUE = { per_page: 100, sort: 'name' } as const

export const providersQueryOptions = (trpc: TRPC, input: Paged<Inputs['providers']['list']>) =>
  trpc.providers.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useProviders(input: Paged<Inputs['providers']['list']> = CATALOGUE) {
  return useQuery(providersQueryOptions(useTRPC(), input))
}

export const accountsQueryOptions = (trpc: TRPC, input: Paged<Inputs['accounts']['list']>) =>
  trpc.accounts.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useAccountList(input: Paged<Inputs['accounts']['list']>) {
  return useQuery(accountsQueryOptions(useTRPC(), input))
}

export const modelsQueryOptions = (trpc: TRPC, input: Paged<Inputs['largeLanguageModels']['list']>) =>
  trpc.largeLanguageModels.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useModelList(input: Paged<Inputs['largeLanguageModels']['list']>) {
  return useQuery(modelsQueryOptions(useTRPC(), input))
}

export const toolsQueryOptions = (trpc: TRPC, input: Paged<Inputs['tools']['list']>) =>
  trpc.tools.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useToolList(input: Paged<Inputs['tools']['list']>) {
  return useQuery(toolsQueryOptions(useTRPC(), input))
}

export const workspacePageQueryOptions = (trpc: TRPC, input: Paged<Inputs['workspaces']['list']>) =>
  trpc.workspaces.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useWorkspacePage(input: Paged<Inputs['workspaces']['list']>) {
  return useQuery(workspacePageQueryOptions(useTRPC(), input))
}

export const memberPageQueryOptions = (trpc: TRPC, input: Inputs['workspaces']['members']['list']) =>
  trpc.workspaces.members.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useMemberPage(input: Inputs['workspaces']['members']['list']) {
  return useQuery(memberPageQueryOptions(useTRPC(), input))
}

export function useSignInMethods() {
  return useQuery(useTRPC().sso.providers.queryOptions(undefined, { staleTime: 60_000 }))
}

/** Marks stale every list of the given procedures' paths. */
function useStale() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return {
    trpc,
    queryClient,
    stale: (...filters: { queryKey: readonly unknown[] }[]) => {
      for (const filter of filters) void queryClient.invalidateQueries(filter)
    },
  }
}

// Providers ---------------------------------------------------------------------------------------

function useProvidersChanged() {
  const { trpc, stale } = useStale()
  return () =>
    stale(
      trpc.providers.pathFilter(),
      trpc.accounts.pathFilter(),
      trpc.largeLanguageModels.pathFilter(),
      trpc.tools.pathFilter(),
      trpc.agents.pathFilter(),
    )
}

export function useCreateProvider(config?: MutationConfig<Outputs['providers']['create'], Inputs['providers']['create']>) {
  const changed = useProvidersChanged()
  return useSubmission(useTRPC().providers.create.mutationOptions(updatingCache(config, changed)))
}

export function useUpdateProvider(config?: MutationConfig<Outputs['providers']['update'], Inputs['providers']['update']>) {
  const changed = useProvidersChanged()
  return useSubmission(useTRPC().providers.update.mutationOptions(updatingCache(config, changed)))
}

export function useDeleteProvider(config?: MutationConfig<Outputs['providers']['delete'], Inputs['providers']['delete']>) {
  const changed = useProvidersChanged()
  return useSubmission(useTRPC().providers.delete.mutationOptions(updatingCache(config, changed)))
}

// Accounts ----------------------------------------------------------------------------------------

/** An account changes which models have a credential, and what the agents' tool pickers offer. */
function useAccountsChanged() {
  const { trpc, stale } = useStale()
  return () => stale(trpc.accounts.pathFilter(), trpc.largeLanguageModels.pathFilter(), trpc.agents.pathFilter())
}

export function useCreateAccount(config?: MutationConfig<Outputs['accounts']['create'], Inputs['accounts']['create']>) {
  const changed = useAccountsChanged()
  return useSubmission(useTRPC().accounts.create.mutationOptions(updatingCache(config, changed)))
}

export function useUpdateAccount(config?: MutationConfig<Outputs['accounts']['update'], Inputs['accounts']['update']>) {
  const changed = useAccountsChanged()
  return useSubmission(useTRPC().accounts.update.mutationOptions(updatingCache(config, changed)))
}

export function useDeleteAccount(config?: MutationConfig<Outputs['accounts']['delete'], Inputs['accounts']['delete']>) {
  const changed = useAccountsChanged()
  return useSubmission(useTRPC().accounts.delete.mutationOptions(updatingCache(config, changed)))
}

// Tools -------------------------------------------------------------------------------------------

/** A tool is shown inside agents too (their `tools`), so those go stale with it. */
function useToolsChanged() {
  const { trpc, stale } = useStale()
  return () => stale(trpc.tools.pathFilter(), trpc.agents.pathFilter())
}

export function useCreateTool(config?: MutationConfig<Outputs['tools']['create'], Inputs['tools']['create']>) {
  const changed = useToolsChanged()
  return useSubmission(useTRPC().tools.create.mutationOptions(updatingCache(config, changed)))
}

export function useUpdateTool(config?: MutationConfig<Outputs['tools']['update'], Inputs['tools']['update']>) {
  const changed = useToolsChanged()
  return useSubmission(useTRPC().tools.update.mutationOptions(updatingCache(config, changed)))
}

export function useDeleteTool(config?: MutationConfig<Outputs['tools']['delete'], Inputs['tools']['delete']>) {
  const changed = useToolsChanged()
  return useSubmission(useTRPC().tools.delete.mutationOptions(updatingCache(config, changed)))
}

// Workspaces and members --------------------------------------------------------------------------

/** Every workspace list (the header's switcher among them) and the workspace read alone. */
function useWorkspacesChanged() {
  const { trpc, stale } = useStale()
  return () => stale(trpc.workspaces.list.pathFilter(), trpc.workspaces.retrieve.pathFilter())
}

export function useCreateWorkspace(config?: MutationConfig<Outputs['workspaces']['create'], Inputs['workspaces']['create']>) {
  const changed = useWorkspacesChanged()
  return useSubmission(useTRPC().workspaces.create.mutationOptions(updatingCache(config, changed)))
}

export function useUpdateWorkspace(config?: MutationConfig<Outputs['workspaces']['update'], Inputs['workspaces']['update']>) {
  const changed = useWorkspacesChanged()
  return useSubmission(useTRPC().workspaces.update.mutationOptions(updatingCache(config, changed)))
}

export function useDeleteWorkspace(config?: MutationConfig<Outputs['workspaces']['delete'], Inputs['workspaces']['delete']>) {
  const changed = useWorkspacesChanged()
  return useSubmission(useTRPC().workspaces.delete.mutationOptions(updatingCache(config, changed)))
}

/** The workspaces too: a member who left no longer has the workspace. */
function useMembersChanged() {
  const { trpc, stale } = useStale()
  return () => stale(trpc.workspaces.members.pathFilter(), trpc.workspaces.list.pathFilter())
}

export function useAddMember(config?: MutationConfig<Outputs['workspaces']['members']['add'], Inputs['workspaces']['members']['add']>) {
  const changed = useMembersChanged()
  return useSubmission(useTRPC().workspaces.members.add.mutationOptions(updatingCache(config, changed)))
}

export function useUpdateMember(
  config?: MutationConfig<Outputs['workspaces']['members']['update'], Inputs['workspaces']['members']['update']>,
) {
  const changed = useMembersChanged()
  return useSubmission(useTRPC().workspaces.members.update.mutationOptions(updatingCache(config, changed)))
}

export function useRemoveMember(
  config?: MutationConfig<Outputs['workspaces']['members']['remove'], Inputs['workspaces']['members']['remove']>,
) {
  const changed = useMembersChanged()
  return useSubmission(useTRPC().workspaces.members.remove.mutationOptions(updatingCache(config, changed)))
}
