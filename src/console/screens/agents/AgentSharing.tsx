/**
 * Sharing an agent (`agents.share`, `POST /api/v1/agents/{agent_uuid}/share`; docs/api/tenancy.md,
 * "Shares"): with a member of the current workspace, found by e-mail or name among its first 100
 * members (`workspaces.members.list`), or with one of the caller's workspaces (`workspaces.list`),
 * at `read`, `write` or `admin`; changing a share's permission or removing it
 * (`permission: null`). The service's `entity_type` and `entity_id` (a user's id, a workspace's
 * uuid) are taken from the pick, never typed. Only holders of `admin` see the shares, and only
 * they may share: anyone else gets a 403, shown in words.
 */
import { Alert, Button, Group, Paper, SegmentedControl, Select, Stack, Table, Text, Title, VisuallyHidden } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { problemOf, type RouterInputs } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { useWorkspaceMembers } from '../../lib/session-api.ts'
import { fieldError, otherIssues } from '../../ui/forms.ts'
import { describeProblem, describeStatus } from '../../ui/states.tsx'
import type { Agent } from './agentDraft.ts'
import { useShareAgent } from './api.ts'

type ShareInput = RouterInputs['agents']['share']
type Permission = NonNullable<ShareInput['permission']>
const PERMISSIONS: { value: Permission; label: string }[] = [
  { value: 'read', label: 'Read: view, chat, favourite' },
  { value: 'write', label: 'Write: also change' },
  { value: 'admin', label: 'Admin: also share and delete' },
]

/** Whom a share names, for a person. */
function shareName(share: NonNullable<Agent['shares']>[number]): string {
  return share.entity_type === 'user' ? `${share.entity.name} <${share.entity.email}>` : `${share.entity.name} (workspace)`
}

export function AgentSharing({ agent }: { agent: Agent }) {
  const share = useShareAgent({
    onSuccess: (_answer, input) => notifications.show({ color: 'green', message: input.permission ? 'Shared' : 'Share removed' }),
  })
  const shares = agent.shares ?? []
  const problem = share.error ? problemOf(share.error) : null
  return (
    <Paper withBorder p="md" component="section" aria-labelledby="agent-sharing">
      <Stack>
        <Title order={3} size="h4" id="agent-sharing">
          Sharing
        </Title>
        <ShareForm
          onShare={(input, done) => share.mutate({ agent_uuid: agent.uuid, ...input }, { onSuccess: done })}
          pending={share.isPending}
          problem={problem}
        />
        {problem && !(problem.status === 400 && otherIssues(problem, ['entity_id', 'permission']).length === 0) ? (
          <Alert
            color="red"
            title={problem.status === 403 ? 'Not allowed to share this agent' : describeStatus(problem).title}
            role="alert"
          >
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              {problem.status === 403
                ? `Sharing needs admin permission on the agent. ${problem.message}`
                : otherIssues(problem, ['entity_id', 'permission']).join('; ') || describeStatus(problem).detail}
            </Text>
          </Alert>
        ) : null}
        {shares.length === 0 ? (
          <Text size="sm" c="dimmed">
            {agent.is_owner ? 'Not shared with anyone.' : 'No shares to show: only holders of admin permission see them.'}
          </Text>
        ) : (
          <Table.ScrollContainer minWidth={420}>
            <Table>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Shared with</Table.Th>
                  <Table.Th>Permission</Table.Th>
                  <Table.Th>
                    <VisuallyHidden>Actions</VisuallyHidden>
                  </Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {shares.map((item) => {
                  const who = shareName(item)
                  const entity =
                    item.entity_type === 'user'
                      ? { entity_type: 'user' as const, entity_id: item.entity.id }
                      : { entity_type: 'workspace' as const, entity_id: item.entity.uuid }
                  return (
                    <Table.Tr key={`${item.entity_type}:${entity.entity_id}`}>
                      <Table.Td style={{ maxWidth: 320 }}>
                        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                          {who}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <Select
                          aria-label={`Permission of ${who}`}
                          data={PERMISSIONS.map(({ value }) => value)}
                          value={item.permission}
                          allowDeselect={false}
                          onChange={(permission) =>
                            permission && share.mutate({ agent_uuid: agent.uuid, ...entity, permission: permission as Permission })
                          }
                          w={110}
                          comboboxProps={{ withinPortal: true }}
                        />
                      </Table.Td>
                      <Table.Td>
                        <Button
                          size="xs"
                          variant="subtle"
                          color="red"
                          aria-label={`Stop sharing with ${who}`}
                          onClick={() => share.mutate({ agent_uuid: agent.uuid, ...entity, permission: null })}
                        >
                          Remove
                        </Button>
                      </Table.Td>
                    </Table.Tr>
                  )
                })}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Stack>
    </Paper>
  )
}

function ShareForm({
  onShare,
  pending,
  problem,
}: {
  /** `done` runs once the share is stored. */
  onShare: (input: Omit<ShareInput, 'agent_uuid'>, done: () => void) => void
  pending: boolean
  problem: ReturnType<typeof problemOf> | null
}) {
  const session = useSession()
  const [kind, setKind] = useState<'user' | 'workspace'>('user')
  const [userId, setUserId] = useState<string | null>(null)
  const [workspace, setWorkspace] = useState<string | null>(null)
  const [permission, setPermission] = useState<Permission>('read')
  const members = useWorkspaceMembers(session.workspace, kind === 'user')
  const memberOptions = (members.data?.data ?? [])
    .filter((member) => member.user.id !== session.me.id)
    .map((member) => ({ value: String(member.user.id), label: `${member.user.name} <${member.user.email}>` }))
  const picked = kind === 'user' ? userId : workspace
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!picked || pending) return
    const entity =
      kind === 'user'
        ? { entity_type: 'user' as const, entity_id: Number(picked) }
        : { entity_type: 'workspace' as const, entity_id: picked }
    onShare({ ...entity, permission }, () => {
      setUserId(null)
      setWorkspace(null)
    })
  }
  const workspaceName = session.workspaces.find((w) => w.uuid === session.workspace)?.name ?? 'this workspace'
  return (
    <form onSubmit={submit} noValidate aria-label="Share the agent">
      <Stack gap="xs">
        <SegmentedControl
          aria-label="Share with"
          value={kind}
          onChange={(value) => setKind(value as typeof kind)}
          data={[
            { value: 'user', label: 'A user' },
            { value: 'workspace', label: 'A workspace' },
          ]}
          style={{ alignSelf: 'start' }}
        />
        <Group align="start" gap="xs" wrap="wrap">
          {kind === 'user' ? (
            <Select
              label="User"
              description={
                members.error
                  ? undefined
                  : members.data && memberOptions.length === 0
                    ? `Nobody else is a member of ${workspaceName}: add them to it first, or share with a workspace.`
                    : `A member of ${workspaceName}, by e-mail or name.`
              }
              placeholder={members.isPending ? 'Loading the members…' : 'Type an e-mail or a name'}
              data={memberOptions}
              value={userId}
              onChange={setUserId}
              searchable
              clearable
              nothingFoundMessage="No member has that e-mail or name"
              disabled={members.isPending || memberOptions.length === 0}
              error={
                members.error ? `The members could not be read: ${describeProblem(members.error).detail}` : fieldError(problem, 'entity_id')
              }
              style={{ flex: '2 1 240px', minWidth: 0 }}
              comboboxProps={{ withinPortal: true }}
            />
          ) : (
            <Select
              label="Workspace"
              description="One of your workspaces; its members get the permission while they work in it."
              data={session.workspaces.map((w) => ({ value: w.uuid, label: w.name }))}
              value={workspace}
              onChange={setWorkspace}
              searchable
              error={fieldError(problem, 'entity_id')}
              style={{ flex: '2 1 200px', minWidth: 0 }}
              comboboxProps={{ withinPortal: true }}
            />
          )}
          <Select
            label="Permission"
            data={PERMISSIONS}
            value={permission}
            onChange={(value) => value && setPermission(value as Permission)}
            allowDeselect={false}
            error={fieldError(problem, 'permission')}
            style={{ flex: '1 1 200px', minWidth: 0 }}
            comboboxProps={{ withinPortal: true }}
          />
        </Group>
        <Group>
          <Button type="submit" variant="light" loading={pending} disabled={!picked}>
            Share
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
