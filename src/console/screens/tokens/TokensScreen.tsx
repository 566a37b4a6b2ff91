/**
 * Access tokens (docs/api/authentication.md, "Application tokens"): the caller's application
 * tokens (`accessTokens.list`, `GET /api/v1/access-tokens`) with their kind, abilities,
 * workspace, expiry and last use; "New token" (`accessTokens.create`, ./CreateTokenModal.tsx)
 * shows the plaintext once; "Revoke" (`accessTokens.delete`) asks first. Tokens are managed with
 * the sign-in (basic) token the console holds; the service refuses it to application tokens (403).
 */
import { Badge, Button, Group, Modal, Stack, Table, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import type { RouterOutputs } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice } from '../../ui/states.tsx'
import { useRevokeToken, useTokens } from './api.ts'
import { CreateTokenModal } from './CreateTokenModal.tsx'

type Token = RouterOutputs['accessTokens']['list']['data'][number]

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export default function TokensScreen() {
  const [page, setPage] = useState(1)
  const [creating, { open, close }] = useDisclosure(false)
  const [revoking, setRevoking] = useState<Token | null>(null)
  const input = { page, per_page: 20 }
  const tokens = useTokens(input)
  return (
    <>
      <ScreenTitle title="Access tokens">
        <Button onClick={open}>New token</Button>
      </ScreenTitle>
      <Text c="dimmed" size="sm" mb="md">
        Application tokens let an integration call the API as you: send one as <code>Authorization: Bearer &lt;token&gt;</code>.
      </Text>
      <CreateTokenModal opened={creating} onClose={close} />
      <RevokeModal token={revoking} onClose={() => setRevoking(null)} />
      <ListStates
        query={tokens}
        rows={tokens.data?.data}
        loading="Loading tokens"
        empty={{ title: 'No application tokens', detail: 'Create one for each integration, so each can be revoked alone.' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => <TokenTable tokens={rows} onRevoke={setRevoking} />}
      </ListStates>
    </>
  )
}

function TokenTable({ tokens, onRevoke }: { tokens: Token[]; onRevoke: (token: Token) => void }) {
  const { workspaces } = useSession()
  const workspaceName = (uuid: string | null) => (uuid ? (workspaces.find((w) => w.uuid === uuid)?.name ?? uuid) : 'Every workspace')
  const now = Date.now()
  return (
    <DataTable columns={['Name', 'Kind', 'Abilities', 'Workspace', 'Expires', 'Last used', 'Actions']} minWidth={760}>
      {tokens.map((token) => {
        const expired = token.expires_at !== null && new Date(token.expires_at).getTime() < now
        return (
          <Table.Tr key={token.uuid}>
            <Table.Td style={{ maxWidth: 260 }}>
              <Text fw={600} truncate="end" title={token.name}>
                {token.name}
              </Text>
              <Text size="xs" c="dimmed" ff="monospace">
                {token.prefix}…
              </Text>
            </Table.Td>
            <Table.Td>{token.kind}</Table.Td>
            <Table.Td>
              <Badge variant="light" color={token.abilities.includes('write') ? 'blue' : 'gray'}>
                {token.abilities.includes('write') ? 'read + write' : 'read only'}
              </Badge>
            </Table.Td>
            <Table.Td style={{ maxWidth: 200 }}>
              <Text size="sm" truncate="end" title={workspaceName(token.workspace_uuid)}>
                {workspaceName(token.workspace_uuid)}
              </Text>
            </Table.Td>
            <Table.Td>
              <Text size="sm" c={expired ? 'red' : undefined}>
                {token.expires_at ? `${expired ? 'Expired ' : ''}${dateFormat.format(new Date(token.expires_at))}` : 'Never'}
              </Text>
            </Table.Td>
            <Table.Td>
              <Text size="sm">{token.last_used_at ? dateTimeFormat.format(new Date(token.last_used_at)) : 'Never'}</Text>
            </Table.Td>
            <Table.Td>
              <Button size="xs" color="red" variant="light" aria-label={`Revoke ${token.name}`} onClick={() => onRevoke(token)}>
                Revoke
              </Button>
            </Table.Td>
          </Table.Tr>
        )
      })}
    </DataTable>
  )
}

function RevokeModal({ token: target, onClose }: { token: Token | null; onClose: () => void }) {
  // Kept while the dialog closes, so its text does not empty before it is gone.
  const [token, setShown] = useState(target)
  if (target && target !== token) setShown(target)
  const revoke = useRevokeToken({
    onSuccess: () => {
      notifications.show({ message: `Token "${token?.name ?? ''}" revoked` })
      close()
    },
  })
  const close = () => {
    revoke.reset()
    onClose()
  }
  return (
    <Modal opened={target !== null} onClose={close} title="Revoke this token?">
      <Stack>
        <Text style={{ overflowWrap: 'anywhere' }}>
          “{token?.name}” stops working at once: every integration that uses it gets 401 from now on. This cannot be undone.
        </Text>
        {revoke.error ? <ErrorNotice error={revoke.error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color="red" loading={revoke.isPending} onClick={() => token && revoke.mutate({ token_uuid: token.uuid })}>
            Revoke token
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
