/**
 * Pieces the settings tabs share: a confirmation before a delete (with the service's refusal said
 * in it), a section heading with its action, and a row's Edit and Delete buttons.
 */
import { Button, Group, Modal, Stack, Text, Title } from '@mantine/core'
import type { ReactNode } from 'react'
import { ErrorNotice } from '../../ui/states.tsx'

export function ConfirmModal({
  opened,
  title,
  children,
  confirm,
  pending,
  error,
  onConfirm,
  onClose,
}: {
  opened: boolean
  title: string
  children: ReactNode
  confirm: string
  pending: boolean
  error: unknown
  onConfirm: () => void
  onClose: () => void
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title}>
      <Stack>
        <Text component="div" style={{ overflowWrap: 'anywhere' }}>
          {children}
        </Text>
        {error ? <ErrorNotice error={error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red" loading={pending} onClick={onConfirm}>
            {confirm}
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}

export function SectionTitle({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Group justify="space-between" mt="lg" mb="xs" wrap="wrap" gap="sm">
      <Title order={3}>{title}</Title>
      <Group gap="xs">{children}</Group>
    </Group>
  )
}

/** A list row's Edit and Delete buttons, labelled with the row's name for screen readers and tests. */
export function EditDeleteButtons({ name, onEdit, onDelete }: { name: string; onEdit: () => void; onDelete: () => void }) {
  return (
    <Group gap={4} wrap="nowrap">
      <Button size="xs" variant="light" aria-label={`Edit ${name}`} onClick={onEdit}>
        Edit
      </Button>
      <Button size="xs" variant="light" color="red" aria-label={`Delete ${name}`} onClick={onDelete}>
        Delete
      </Button>
    </Group>
  )
}
