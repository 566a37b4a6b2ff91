/**
 * Trains an agent from one source (`knowledge.train`, `POST /api/v1/agents/{agent_uuid}/train`):
 * a text with its name, a web page's URL, or the media key of a file uploaded through the REST
 * API. The service answers at once (202) with the new document `queued`, or the existing one when
 * the same source was trained before; a 400's issue (`sources.0.url`) shows at its field.
 */
import { Button, Group, Paper, SegmentedControl, Stack, Text, Textarea, TextInput, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { problemOf, type RouterInputs } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useTrain } from './api.ts'

type Source = RouterInputs['knowledge']['train']['sources'][number]
type Kind = Source['type']

const EMPTY = { name: '', text: '', url: '', key: '' }

function toSource(kind: Kind, form: typeof EMPTY): Source {
  if (kind === 'text') return { type: 'text', name: form.name, text: form.text }
  if (kind === 'url') return { type: 'url', url: form.url.trim() }
  return { type: 'file', key: form.key.trim() }
}

export function TrainForm({ agentUuid }: { agentUuid: string }) {
  const [kind, setKind] = useState<Kind>('text')
  const [form, setForm] = useState(EMPTY)
  const train = useTrain({
    onSuccess: (answer) => {
      const document = answer.data[0]
      notifications.show({ color: 'green', message: document ? `“${document.name}” is ${document.status}` : 'Training started' })
      setForm(EMPTY)
    },
  })
  const problem = train.error ? problemOf(train.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    train.mutate({ agent_uuid: agentUuid, sources: [toSource(kind, form)] })
  }
  const set = (key: keyof typeof EMPTY) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: event.currentTarget.value })
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="train-title">
      <form onSubmit={submit} noValidate>
        <Stack>
          <Title order={3} size="h4" id="train-title">
            Train
          </Title>
          <SegmentedControl
            aria-label="Source"
            value={kind}
            onChange={(value) => {
              setKind(value as Kind)
              train.reset()
            }}
            data={[
              { value: 'text', label: 'Text' },
              { value: 'url', label: 'Web page' },
              { value: 'file', label: 'Uploaded file' },
            ]}
            style={{ alignSelf: 'flex-start' }}
          />
          <FormProblem problem={problem} fields={['sources.0.name', 'sources.0.text', 'sources.0.url', 'sources.0.key']} />
          {kind === 'text' ? (
            <>
              <TextInput
                label="Name"
                description="How the document is listed and cited"
                required
                value={form.name}
                onChange={set('name')}
                error={fieldError(problem, 'sources.0.name')}
              />
              <Textarea
                label="Text"
                required
                autosize
                minRows={5}
                maxRows={16}
                value={form.text}
                onChange={set('text')}
                error={fieldError(problem, 'sources.0.text')}
              />
            </>
          ) : null}
          {kind === 'url' ? (
            <TextInput
              label="URL"
              description="An http or https page; it is fetched and its text extracted"
              type="url"
              required
              placeholder="https://example.com/handbook"
              value={form.url}
              onChange={set('url')}
              error={fieldError(problem, 'sources.0.url')}
            />
          ) : null}
          {kind === 'file' ? (
            <>
              <Text size="sm" c="dimmed">
                The console cannot upload files: upload one with <code>POST /api/v1/media</code> (PDF, DOCX, text, Markdown, HTML, CSV or
                JSON) and enter the key it answered.
              </Text>
              <TextInput label="Media key" required value={form.key} onChange={set('key')} error={fieldError(problem, 'sources.0.key')} />
            </>
          ) : null}
          <Group>
            <Button type="submit" loading={train.isPending}>
              Train agent
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  )
}
