/**
 * Settings (`/settings/<tab>`): model keys (providers, accounts and which models have a
 * credential), tools, workspaces, the current workspace's members, and the server's sign-in
 * methods. Each tab is its own module, loaded when first opened; the tab is in the path, so each
 * can be linked to (the agent form links "Add a key" and an empty tool picker here).
 */
import { Tabs } from '@mantine/core'
import { lazy, Suspense } from 'react'
import { Navigate, useNavigate, useParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { Loading } from '../../ui/states.tsx'

const TABS = [
  { value: 'model-keys', label: 'Model keys', Panel: lazy(() => import('./ModelKeysTab.tsx')) },
  { value: 'tools', label: 'Tools', Panel: lazy(() => import('./ToolsTab.tsx')) },
  { value: 'workspaces', label: 'Workspaces', Panel: lazy(() => import('./WorkspacesTab.tsx')) },
  { value: 'members', label: 'Members', Panel: lazy(() => import('./MembersTab.tsx')) },
  { value: 'sign-in', label: 'Sign-in methods', Panel: lazy(() => import('./SignInTab.tsx')) },
] as const

export default function SettingsScreen() {
  const { tab } = useParams()
  const navigate = useNavigate()
  const current = TABS.find((t) => t.value === tab)
  if (!current) return <Navigate to="/settings/model-keys" replace />
  const { Panel } = current
  return (
    <>
      <ScreenTitle title="Settings" />
      <Tabs value={current.value} onChange={(value) => value && void navigate(`/settings/${value}`)} keepMounted={false}>
        <Tabs.List mb="md" style={{ flexWrap: 'wrap' }}>
          {TABS.map((t) => (
            <Tabs.Tab key={t.value} value={t.value}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value={current.value}>
          <Suspense fallback={<Loading />}>
            <Panel />
          </Suspense>
        </Tabs.Panel>
      </Tabs>
    </>
  )
}
