/**
 * The "New endpoint" dialog of the webhooks screen: URL, description and event types ("All
 * events" is `["*"]`, which takes the types the service adds later too) (`webhooks.create`,
 * `POST /api/v1/webhook-endpoints`). The service answers the signing secret once, so the dialog
 * then shows it with a copy button and a warning, and forgets it when closed.
 */
import { Button, Group, Modal, MultiSelect, Stack, Textarea, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreateEndpoint } from './api.ts'
import { SecretShown } from './SecretShown.tsx'
import { ALL_EVENTS, EVENT_TYPES, type EventChoice } from './webhook-model.ts'

const EMPTY = { url: '', description: '', eventTypes: [ALL_EVENTS] as EventChoice[] }

const EVENT_OPTIONS = [{ value: ALL_EVENTS, label: 'All events' }, ...EVENT_TYPES.map((type) => ({ value: type, label: type }))]

const isEventChoice = (value: string): value is EventChoice => value === ALL_EVENTS || EVENT_TYPES.some((type) => type === value)

/**
 * The event types after a change of the picker: "All events" picked now stands alone; a type
 * picked while "All events" was there replaces it.
 */
function pickEventTypes(previous: EventChoice[], next: string[]): EventChoice[] {
  const chosen = next.filter(isEventChoice)
  if (!chosen.includes(ALL_EVENTS)) return chosen
  return previous.includes(ALL_EVENTS) ? chosen.filter((type) => type !== ALL_EVENTS) : [ALL_EVENTS]
}

export function CreateEndpointModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const [form, setForm] = useState(EMPTY)
  const create = useCreateEndpoint()
  const problem = create.error ? problemOf(create.error) : null
  const created = create.data?.data
  // The secret is dropped once the dialog has closed (not before: its closing would show the form again).
  const forget = () => {
    create.reset()
    setForm(EMPTY)
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate({
      url: form.url.trim(),
      event_types: form.eventTypes,
      ...(form.description.trim() ? { description: form.description.trim() } : {}),
    })
  }
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      onExitTransitionEnd={forget}
      title={created ? 'Endpoint created' : 'New webhook endpoint'}
      size="lg"
      closeOnClickOutside={!created}
    >
      {created ? (
        <SecretShown secret={created.secret} label="Signing secret" onDone={onClose} />
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <FormProblem problem={problem} fields={['url', 'description', 'event_types']} />
            <TextInput
              label="URL"
              description="Where the events are sent, as POST requests (http or https)"
              placeholder="https://example.com/webhooks"
              type="url"
              required
              data-autofocus
              value={form.url}
              onChange={(e) => setForm({ ...form, url: e.currentTarget.value })}
              error={fieldError(problem, 'url')}
            />
            <Textarea
              label="Description"
              description="What receives the events, for whoever reads this list"
              autosize
              minRows={2}
              value={form.description}
              onChange={(e) => setForm({ ...form, description: e.currentTarget.value })}
              error={fieldError(problem, 'description')}
            />
            <MultiSelect
              label="Event types"
              description="“All events” includes the types added later"
              required
              data={EVENT_OPTIONS}
              value={form.eventTypes}
              onChange={(next) => setForm({ ...form, eventTypes: pickEventTypes(form.eventTypes, next) })}
              searchable
              error={fieldError(problem, 'event_types')}
              comboboxProps={{ withinPortal: true }}
            />
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending}>
                Create endpoint
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  )
}
