/**
 * The session's data (./session.tsx): the signed-in user (`user.me`), their workspaces
 * (`workspaces.list`), the current workspace's members (`workspaces.members.list`, for sharing),
 * sign-out (`auth.logout`), and what a workspace switch does to the cache: every query but the
 * user and the workspaces is reset, so each screen reads its data again in the new workspace.
 */
import { matchQuery, useQuery, useQueryClient } from '@tanstack/react-query'
import { useCallback } from 'react'
import { api } from './api.ts'
import { useTRPC, type TRPC } from './trpc.ts'

/** The workspaces the switcher offers: the caller's first 100, by name. */
const WORKSPACES_INPUT = { per_page: 100, sort: 'name' } as const

export const meQueryOptions = (trpc: TRPC) => trpc.user.me.queryOptions(undefined, { staleTime: Infinity })

export const workspacesQueryOptions = (trpc: TRPC) => trpc.workspaces.list.queryOptions(WORKSPACES_INPUT, { staleTime: 60_000 })

/** The signed-in user, read once per sign-in. */
export function useMe() {
  return useQuery(meQueryOptions(useTRPC()))
}

/** The caller's workspaces, for the switcher. */
export function useWorkspaces() {
  return useQuery(workspacesQueryOptions(useTRPC()))
}

export const membersQueryOptions = (trpc: TRPC, workspaceUuid: string, enabled: boolean) =>
  trpc.workspaces.members.list.queryOptions({ workspace_uuid: workspaceUuid, per_page: 100 }, { enabled, staleTime: 60_000 })

/** The first 100 members of a workspace (read while `enabled`). */
export function useWorkspaceMembers(workspaceUuid: string, enabled: boolean) {
  return useQuery(membersQueryOptions(useTRPC(), workspaceUuid, enabled))
}

/**
 * After the workspace changed (the header X-Workspace-UUID already names the new one): resets every
 * query but the session's own, so the screens shown read theirs again and no other is kept from
 * the old workspace.
 */
export function useResetWorkspaceData(): () => void {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useCallback(() => {
    const kept = [trpc.user.me.queryFilter(), trpc.workspaces.list.queryFilter(WORKSPACES_INPUT)]
    void queryClient.resetQueries({ predicate: (query) => !kept.some((filter) => matchQuery(filter, query)) })
  }, [trpc, queryClient])
}

/**
 * Revokes the token (`auth.logout`), on the client itself rather than as a cached mutation: its
 * failure, a 401 of an already ended token included, must not start the "session ended" path of
 * main.tsx, since signing out goes on regardless.
 */
export async function revokeToken(): Promise<void> {
  await api.auth.logout.mutate({}).catch(() => {})
}
