/**
 * The webhooks screen's confirmations: rotating an endpoint's signing secret
 * (`webhooks.rotateSecret`, `POST /api/v1/webhook-endpoints/{endpoint_uuid}/rotate-secret`), whose
 * answer shows the new secret once, and deleting an endpoint with its deliveries
 * (`webhooks.delete`). Each keeps the endpoint it was opened for while it closes, so its text
 * does not empty before it is gone.
 */
import { Button, Code, Group, Modal, Stack, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { ErrorNotice } from '../../ui/states.tsx'
import { useDeleteEndpoint, useRotateSecret } from './api.ts'
import { SecretShown } from './SecretShown.tsx'
import type { Endpoint } from './webhook-model.ts'

/** The endpoint a dialog was opened for, kept while it closes. */
function useKept(target: Endpoint | null): Endpoint | null {
  const [kept, setKept] = useState(target)
  if (target && target !== kept) setKept(target)
  return kept
}

function EndpointUrl({ endpoint }: { endpoint: Endpoint | null }) {
  return <Code style={{ overflowWrap: 'anywhere', whiteSpace: 'normal' }}>{endpoint?.url}</Code>
}

export function RotateSecretModal({ endpoint: target, onClose }: { endpoint: Endpoint | null; onClose: () => void }) {
  const endpoint = useKept(target)
  const rotate = useRotateSecret()
  const rotated = rotate.data?.data
  return (
    <Modal
      opened={target !== null}
      onClose={onClose}
      onExitTransitionEnd={() => rotate.reset()}
      title={rotated ? 'Secret rotated' : 'Rotate the signing secret?'}
      size="lg"
      closeOnClickOutside={!rotated}
    >
      {rotated ? (
        <SecretShown secret={rotated.secret} label="New signing secret" onDone={onClose}>
          The previous secret signs each delivery too for 24 hours, so the receiver can switch over.
        </SecretShown>
      ) : (
        <Stack>
          <Text>
            Deliveries to <EndpointUrl endpoint={endpoint} /> are signed with a new secret from now on. The current secret signs them too
            for 24 hours, then stops.
          </Text>
          {rotate.error ? <ErrorNotice error={rotate.error} /> : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button loading={rotate.isPending} onClick={() => endpoint && rotate.mutate({ endpoint_uuid: endpoint.uuid })}>
              Rotate secret
            </Button>
          </Group>
        </Stack>
      )}
    </Modal>
  )
}

export function DeleteEndpointModal({ endpoint: target, onClose }: { endpoint: Endpoint | null; onClose: () => void }) {
  const endpoint = useKept(target)
  const remove = useDeleteEndpoint({
    onSuccess: () => {
      notifications.show({ message: `Endpoint ${endpoint?.url ?? ''} deleted` })
      close()
    },
  })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <Modal opened={target !== null} onClose={close} title="Delete this endpoint?">
      <Stack>
        <Text>
          Events stop going to <EndpointUrl endpoint={endpoint} /> at once, and its deliveries are deleted with it (pending ones are never
          attempted). This cannot be undone.
        </Text>
        {remove.error ? <ErrorNotice error={remove.error} /> : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={close}>
            Cancel
          </Button>
          <Button color="red" loading={remove.isPending} onClick={() => endpoint && remove.mutate({ endpoint_uuid: endpoint.uuid })}>
            Delete endpoint
          </Button>
        </Group>
      </Stack>
    </Modal>
  )
}
