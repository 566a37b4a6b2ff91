/**
 * Settings → Workspaces: the caller's workspaces (`workspaces.list`), a new one created by name
 * (`workspaces.create`: the creator is its owner), each renamed (`workspaces.update`, owners and
 * admins), deleted after a confirmation (`workspaces.delete`, owners; the primary workspace cannot
 * be, which the service's 409 says) and switched to. Every change marks the workspace lists stale,
 * the header's switcher among them; deleting the current workspace switches to the primary one.
 */
import { Badge, Button, Group, Modal, Stack, Table, Text, TextInput } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { useCreateWorkspace, useDeleteWorkspace, useUpdateWorkspace, useWorkspacePage, type Workspace } from './api.ts'
import { ConfirmModal, SectionTitle } from './SettingsParts.tsx'
import { formatDate } from './settings-model.ts'

export default function WorkspacesTab() {
  const session = useSession()
  const [page, setPage] = useState(1)
  const [renaming, setRenaming] = useState<{ workspace: Workspace; key: number } | null>(null)
  const [deleting, setDeleting] = useState<Workspace | null>(null)
  const workspaces = useWorkspacePage({ page, per_page: 20, sort: 'name' })
  const primary = session.me.primary_workspace?.uuid
  return (
    <>
      <SectionTitle title="Workspaces" />
      <Text c="dimmed" size="sm" mb="sm">
        Each workspace has its own agents, keys, tools and members. You own the ones you create.
      </Text>
      <CreateWorkspace />
      <ListStates
        query={workspaces}
        rows={workspaces.data?.data}
        loading="Loading workspaces"
        empty={{ title: 'No workspaces' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Workspace', 'Created', { hidden: 'Actions' }]} minWidth={640} label="Workspaces">
            {rows.map((workspace) => {
              const current = workspace.uuid === session.workspace
              return (
                <Table.Tr key={workspace.uuid}>
                  <Table.Td style={{ maxWidth: 300 }}>
                    <Group gap={4} wrap="nowrap">
                      <Text size="sm" fw={600} truncate="end" title={workspace.name}>
                        {workspace.name}
                      </Text>
                      {current ? (
                        <Badge size="xs" variant="light" color="green">
                          current
                        </Badge>
                      ) : null}
                      {workspace.uuid === primary ? (
                        <Badge size="xs" variant="light">
                          primary
                        </Badge>
                      ) : null}
                    </Group>
                    <Text size="xs" c="dimmed" ff="monospace" truncate="end">
                      {workspace.slug}
                    </Text>
                  </Table.Td>
                  <Table.Td>{formatDate(workspace.created_at)}</Table.Td>
                  <Table.Td>
                    <Group gap={4} wrap="nowrap">
                      <Button
                        size="xs"
                        variant="light"
                        disabled={current}
                        aria-label={`Switch to ${workspace.name}`}
                        onClick={() => session.switchWorkspace(workspace.uuid)}
                      >
                        Switch to
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        aria-label={`Rename ${workspace.name}`}
                        onClick={() => setRenaming({ workspace, key: Date.now() })}
                      >
                        Rename
                      </Button>
                      <Button
                        size="xs"
                        variant="light"
                        color="red"
                        aria-label={`Delete ${workspace.name}`}
                        onClick={() => setDeleting(workspace)}
                      >
                        Delete
                      </Button>
                    </Group>
                  </Table.Td>
                </Table.Tr>
              )
            })}
          </DataTable>
        )}
      </ListStates>
      {renaming ? <RenameWorkspace key={renaming.key} workspace={renaming.workspace} onClose={() => setRenaming(null)} /> : null}
      <DeleteWorkspace workspace={deleting} onClose={() => setDeleting(null)} />
    </>
  )
}

function CreateWorkspace() {
  const [name, setName] = useState('')
  const create = useCreateWorkspace({
    onSuccess: (answer) => {
      setName('')
      notifications.show({ message: `Workspace ${answer.data.name} created` })
    },
  })
  const problem = create.error ? problemOf(create.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({ name })
  }
  return (
    <form onSubmit={submit} noValidate aria-label="New workspace">
      <Stack gap="xs" mb="md">
        <FormProblem problem={problem} fields={['name', 'slug']} />
        <Group align="flex-start" gap="xs" wrap="wrap">
          <TextInput
            label="New workspace"
            placeholder="Name"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError(problem, 'name') ?? fieldError(problem, 'slug')}
            style={{ flex: '1 1 240px' }}
          />
          <Button type="submit" mt={25} loading={create.isPending}>
            Create workspace
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

function RenameWorkspace({ workspace, onClose }: { workspace: Workspace; onClose: () => void }) {
  const [name, setName] = useState(workspace.name)
  const update = useUpdateWorkspace({ onSuccess: onClose })
  const problem = update.error ? problemOf(update.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    update.mutate({ workspace_uuid: workspace.uuid, name })
  }
  return (
    <Modal opened onClose={onClose} title={`Rename ${workspace.name}`}>
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={['name']} />
          <TextInput
            label="Name"
            required
            data-autofocus
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError(problem, 'name')}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={update.isPending}>
              Rename
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

function DeleteWorkspace({ workspace, onClose }: { workspace: Workspace | null; onClose: () => void }) {
  const session = useSession()
  const remove = useDeleteWorkspace({
    onSuccess: (_answer, input) => {
      notifications.show({ message: `Workspace ${workspace?.name ?? ''} deleted` })
      // The console must not go on acting in a workspace that is gone.
      if (input.workspace_uuid === session.workspace && session.me.primary_workspace)
        session.switchWorkspace(session.me.primary_workspace.uuid)
      close()
    },
  })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <ConfirmModal
      opened={workspace !== null}
      title="Delete this workspace?"
      confirm="Delete workspace"
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => workspace && remove.mutate({ workspace_uuid: workspace.uuid })}
      onClose={close}
    >
      <b>{workspace?.name}</b> is deleted for every member, with what it holds. Only its owners may delete it, and a primary workspace
      cannot be deleted.
    </ConfirmModal>
  )
}
