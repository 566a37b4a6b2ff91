/**
 * The "New prompt" dialog of the prompt list: name, description, template and visibility
 * (`prompts.create`). There is no /prompts/new screen, so once created the prompt opens on its
 * edit screen, where its inputs and model are declared.
 */
import { Button, Group, Modal, Select, Stack, Textarea, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { useNavigate } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreatePrompt } from './api.ts'
import { VISIBILITY_OPTIONS, type Visibility } from './promptTypes.ts'

const EMPTY = { name: '', description: '', content: '', visibility: 'private' as Visibility }

export function CreatePromptModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const navigate = useNavigate()
  const [form, setForm] = useState(EMPTY)
  const create = useCreatePrompt({
    onSuccess: (answer) => {
      setForm(EMPTY)
      void navigate(`/prompts/${answer.data.uuid}`)
    },
  })
  const problem = create.error ? problemOf(create.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    // Enter in a field submits too: one prompt per press of the button, however fast.
    if (create.isPending) return
    create.mutate(form)
  }
  const close = () => {
    if (create.isPending) return
    create.reset()
    onClose()
  }
  return (
    <Modal opened={opened} onClose={close} title="New prompt" size="lg">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={Object.keys(form)} />
          <TextInput
            label="Name"
            required
            data-autofocus
            value={form.name}
            onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
            error={fieldError(problem, 'name')}
          />
          <TextInput
            label="Description"
            value={form.description}
            onChange={(e) => setForm({ ...form, description: e.currentTarget.value })}
            error={fieldError(problem, 'description')}
          />
          <Textarea
            label="Template"
            description="Mustache: {{key}} inserts the value of the input named key; inputs are declared on the next screen."
            required
            autosize
            minRows={4}
            maxRows={12}
            value={form.content}
            onChange={(e) => setForm({ ...form, content: e.currentTarget.value })}
            error={fieldError(problem, 'content')}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          <Select
            label="Visibility"
            data={VISIBILITY_OPTIONS}
            value={form.visibility}
            onChange={(value) => value && setForm({ ...form, visibility: value as Visibility })}
            allowDeselect={false}
            error={fieldError(problem, 'visibility')}
            comboboxProps={{ withinPortal: true }}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={close} disabled={create.isPending}>
              Cancel
            </Button>
            <Button type="submit" loading={create.isPending}>
              Create prompt
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}
