/**
 * The frame of every signed-in screen: the header with the workspace switcher and sign-out, the
 * navigation (a drawer below 768 px), and the screen. Without a token it sends the browser to
 * sign-in, remembering where it was going.
 */
import { AppShell, Burger, Button, Group, NavLink, ScrollArea, Select, Text, Title } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { Suspense } from 'react'
import { Link, Navigate, Outlet, useLocation } from 'react-router'
import { credentials } from '../lib/api.ts'
import { SessionProvider, useSession } from '../lib/session.tsx'
import { Loading } from './states.tsx'

/** The navigation's entries: label and path. */
const SECTIONS = [
  ['Agents', '/agents'],
  ['Chat', '/chat'],
  ['Approvals', '/approvals'],
  ['Prompts', '/prompts'],
  ['Workflows', '/workflows'],
  ['Knowledge', '/knowledge'],
  ['Datasets', '/datasets'],
  ['Evaluations', '/evaluations'],
  ['Command room', '/command-room'],
  ['Metrics', '/metrics'],
  ['Access tokens', '/tokens'],
  ['Webhooks', '/webhooks'],
  ['Usage', '/usage'],
  ['Audit log', '/audit'],
  ['Settings', '/settings'],
] as const

export function Shell() {
  const location = useLocation()
  if (!credentials.token) return <Navigate to={`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`} replace />
  return (
    <SessionProvider fallback={<Loading label="Signing in" />}>
      <Frame />
    </SessionProvider>
  )
}

function Frame() {
  const [opened, { toggle, close }] = useDisclosure()
  const { pathname } = useLocation()
  const session = useSession()
  return (
    <AppShell header={{ height: 56 }} navbar={{ width: 220, breakpoint: 'sm', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap" gap="xs">
          <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={1} size="h4" visibleFrom="xs">
              Agent Workspace
            </Title>
          </Group>
          <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
            <Select
              aria-label="Workspace"
              data={session.workspaces.map((w) => ({ value: w.uuid, label: w.name }))}
              value={session.workspace}
              onChange={(uuid) => uuid && session.switchWorkspace(uuid)}
              allowDeselect={false}
              w={{ base: 150, sm: 220 }}
              comboboxProps={{ withinPortal: true }}
            />
            <Button variant="subtle" onClick={() => void session.signOut()}>
              Sign out
            </Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Sections">
        <ScrollArea>
          {SECTIONS.map(([label, to]) => (
            <NavLink key={to} component={Link} to={to} label={label} active={pathname.startsWith(to)} onClick={close} />
          ))}
        </ScrollArea>
        <Text size="xs" c="dimmed" mt="auto" truncate="end" title={session.me.email}>
          {session.me.email}
        </Text>
      </AppShell.Navbar>
      <AppShell.Main style={{ minWidth: 0 }}>
        <Suspense fallback={<Loading />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  )
}
