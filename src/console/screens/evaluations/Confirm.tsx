/** A confirmation dialog of the evaluations area: its text, the error of the action, Cancel and the action's button. */
import { Button, Group, Modal, Stack, Text } from '@mantine/core'
import type { ReactNode } from 'react'
import { ErrorNotice } from '../../ui/states.tsx'

export function Confirm({
  opened,
  title,
  action,
  pending,
  error,
  onConfirm,
  onClose,
  children,
}: {
  opened: boolean
  title: string
  action: string
  pending: boolean
  error: unknown
  onConfirm: () => void
  onClose: () => void
  children: ReactNode
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={title}>
      <Stack>
        <Text style={{ overflowWrap: 'anywhere' }}>{children}</Text>
        {error ? <ErrorNotice error={error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button color="red" loading={pending} onClick={onConfirm}>
            {action}
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
