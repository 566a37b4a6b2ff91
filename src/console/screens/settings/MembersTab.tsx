/**
 * Settings → Members: the current workspace's members (`workspaces.members.list`) with their
 * roles; an existing user of the service added by e-mail with a role (`workspaces.members.add`;
 * there are no invitations), a role changed (`workspaces.members.update`), a member removed after
 * a confirmation (`workspaces.members.remove`; removing yourself is leaving).
 *
 * Every member may list; adding, changing and removing are for owners and admins (granting
 * `owner` for owners). Anyone else gets the service's 403, said in words where they acted.
 */
import { Alert, Button, Group, Select, Stack, Table, Text, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { ErrorNotice } from '../../ui/states.tsx'
import { useAddMember, useMemberPage, useRemoveMember, useUpdateMember, type Member, type Role } from './api.ts'
import { ConfirmModal, SectionTitle } from './SettingsParts.tsx'
import { formatDate, ROLE_LABELS, ROLES } from './settings-model.ts'

const ROLE_OPTIONS = ROLES.map((role) => ({ value: role, label: ROLE_LABELS[role] }))
const isRole = (value: string | null): value is Role => ROLES.some((role) => role === value)

export default function MembersTab() {
  const session = useSession()
  const workspaceUuid = session.workspace
  const workspaceName = session.workspaces.find((w) => w.uuid === workspaceUuid)?.name ?? 'this workspace'
  const [page, setPage] = useState(1)
  const [removing, setRemoving] = useState<Member | null>(null)
  const members = useMemberPage({ workspace_uuid: workspaceUuid, page, per_page: 50 })
  const myRole = members.data?.data.find((member) => member.user.id === session.me.id)?.role
  return (
    <>
      <SectionTitle title={`Members of ${workspaceName}`} />
      <Text c="dimmed" size="sm" mb="sm">
        Members work in this workspace; owners and admins manage its members and settings. Switch workspace in the header to manage another.
      </Text>
      {myRole === 'member' ? (
        <Alert color="gray" mb="md" title="You may not manage members here">
          Your role in {workspaceName} is member: only its owners and admins add members, change roles or remove members.
        </Alert>
      ) : null}
      <AddMember workspaceUuid={workspaceUuid} />
      <ListStates
        query={members}
        rows={members.data?.data}
        loading="Loading members"
        empty={{ title: 'No members' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Member', 'Role', 'Since', { hidden: 'Actions' }]} minWidth={720} label="Members">
            {rows.map((member) => (
              <MemberRow key={member.user.id} member={member} workspaceUuid={workspaceUuid} me={session.me.id} onRemove={setRemoving} />
            ))}
          </DataTable>
        )}
      </ListStates>
      <RemoveMember member={removing} workspaceUuid={workspaceUuid} me={session.me.id} onClose={() => setRemoving(null)} />
    </>
  )
}

function AddMember({ workspaceUuid }: { workspaceUuid: string }) {
  const [email, setEmail] = useState('')
  const [role, setRole] = useState<Role>('member')
  const add = useAddMember({ onSuccess: () => setEmail('') })
  const problem = add.error ? problemOf(add.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    add.mutate({ workspace_uuid: workspaceUuid, email: email.trim(), role })
  }
  return (
    <form onSubmit={submit} noValidate aria-label="Add a member">
      <Stack gap="xs" mb="md">
        <FormProblem problem={problem} fields={['email', 'role']} />
        <Group align="flex-start" gap="xs" wrap="wrap">
          <TextInput
            label="E-mail of a user of this service"
            type="email"
            placeholder="someone@example.com"
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={fieldError(problem, 'email') ?? fieldError(problem, 'user_id')}
            style={{ flex: '1 1 240px' }}
          />
          <Select
            label="Role"
            data={ROLE_OPTIONS}
            value={role}
            onChange={(value) => setRole(isRole(value) ? value : 'member')}
            allowDeselect={false}
            error={fieldError(problem, 'role')}
            w={{ base: '100%', xs: 320 }}
            comboboxProps={{ withinPortal: true }}
          />
          <Button type="submit" mt={25} loading={add.isPending}>
            Add member
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

function MemberRow({
  member,
  workspaceUuid,
  me,
  onRemove,
}: {
  member: Member
  workspaceUuid: string
  me: number
  onRemove: (member: Member) => void
}) {
  const update = useUpdateMember()
  const who = member.user.name || member.user.email
  return (
    <Table.Tr>
      <Table.Td style={{ maxWidth: 280 }}>
        <Text size="sm" fw={600} truncate="end" title={who}>
          {who}
          {member.user.id === me ? ' (you)' : ''}
        </Text>
        <Text size="xs" c="dimmed" truncate="end" title={member.user.email}>
          {member.user.email}
        </Text>
      </Table.Td>
      <Table.Td style={{ minWidth: 200 }}>
        <Select
          aria-label={`Role of ${member.user.email}`}
          data={ROLES.map((role) => ({ value: role, label: role }))}
          value={update.isPending && update.variables ? update.variables.role : member.role}
          onChange={(value) => {
            if (isRole(value) && value !== member.role)
              update.mutate({ workspace_uuid: workspaceUuid, user_id: member.user.id, role: value })
          }}
          allowDeselect={false}
          disabled={update.isPending}
          size="xs"
          w={140}
          comboboxProps={{ withinPortal: true }}
        />
        {update.error ? <ErrorNotice error={update.error} /> : null}
      </Table.Td>
      <Table.Td>{formatDate(member.created_at)}</Table.Td>
      <Table.Td>
        <Button size="xs" variant="light" color="red" aria-label={`Remove ${member.user.email}`} onClick={() => onRemove(member)}>
          {member.user.id === me ? 'Leave' : 'Remove'}
        </Button>
      </Table.Td>
    </Table.Tr>
  )
}

function RemoveMember({
  member,
  workspaceUuid,
  me,
  onClose,
}: {
  member: Member | null
  workspaceUuid: string
  me: number
  onClose: () => void
}) {
  const session = useSession()
  const leaving = member?.user.id === me
  const remove = useRemoveMember({
    onSuccess: () => {
      // Having left, the console may no longer act in this workspace.
      if (leaving && session.me.primary_workspace) session.switchWorkspace(session.me.primary_workspace.uuid)
      close()
    },
  })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <ConfirmModal
      opened={member !== null}
      title={leaving ? 'Leave this workspace?' : 'Remove this member?'}
      confirm={leaving ? 'Leave' : 'Remove member'}
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => member && remove.mutate({ workspace_uuid: workspaceUuid, user_id: member.user.id })}
      onClose={close}
    >
      {leaving ? 'You' : <b>{member?.user.email}</b>} will no longer see this workspace or work in it.
    </ConfirmModal>
  )
}
