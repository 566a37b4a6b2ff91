/**
 * Pieces the settings tabs share: a confirmation before a delete (with the service's refusal said
 * in it) and a section heading with its action.
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
