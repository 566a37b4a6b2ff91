/**
 * Who is signed in and in which workspace (docs/console.md, "Sessions"). The user and their
 * workspaces are read once per sign-in; switching workspace refetches every screen's data, since
 * every call carries the workspace as X-Workspace-UUID. A 401 on any call (an expired or revoked
 * token) forgets the token and sends the browser to sign-in once: the sign-in screen makes no
 * authenticated call, so there is nothing to loop on.
 */
import { useQueryClient } from '@tanstack/react-query'
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from 'react'
import { credentials, type RouterOutputs } from './api.ts'
import { revokeToken, useMe, useResetWorkspaceData, useWorkspaces } from './session-api.ts'

export type Me = RouterOutputs['user']['me']['data']
export type Workspace = RouterOutputs['workspaces']['list']['data'][number]

interface Session {
  me: Me
  workspaces: Workspace[]
  /** The uuid of the workspace the console acts in. */
  workspace: string
  switchWorkspace: (uuid: string) => void
  signOut: () => Promise<void>
}

const SessionContext = createContext<Session | null>(null)

/** The session of the signed-in screens; throws outside {@link SessionProvider}. */
export function useSession(): Session {
  const session = useContext(SessionContext)
  if (!session) throw new Error('useSession outside SessionProvider')
  return session
}

/** Starts a session with a new token (after sign-in or sign-up). */
export function signedIn(token: string): void {
  credentials.token = token
  credentials.workspace = null
}

/** Forgets the token and the workspace, here only (the caller revokes the token if it can). */
export function forgetSession(): void {
  credentials.token = null
  credentials.workspace = null
}

/** Reads the user and workspaces, then renders `children` with the session, or `fallback` while loading. */
export function SessionProvider({ children, fallback }: { children: ReactNode; fallback: ReactNode }) {
  const queryClient = useQueryClient()
  const [workspace, setWorkspace] = useState(credentials.workspace)
  const me = useMe()
  const workspaces = useWorkspaces()
  const resetWorkspaceData = useResetWorkspaceData()
  const switchWorkspace = useCallback(
    (uuid: string) => {
      credentials.workspace = uuid
      setWorkspace(uuid)
      resetWorkspaceData()
    },
    [resetWorkspaceData],
  )
  const signOut = useCallback(async () => {
    await revokeToken()
    forgetSession()
    queryClient.clear()
    location.assign('/console/sign-in')
  }, [queryClient])
  const value = useMemo<Session | null>(() => {
    if (!me.data || !workspaces.data) return null
    const list = workspaces.data.data
    const current = list.find((w) => w.uuid === workspace)?.uuid ?? me.data.data.primary_workspace?.uuid ?? list[0]?.uuid ?? ''
    return { me: me.data.data, workspaces: list, workspace: current, switchWorkspace, signOut }
  }, [me.data, workspaces.data, workspace, switchWorkspace, signOut])
  if (!value) return <>{fallback}</>
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>
}
