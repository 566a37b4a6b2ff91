/**
 * Trains an agent (`knowledge.train`, `POST /api/v1/agents/{agent_uuid}/train`) from a text with
 * its name, a web page's URL (with how often it is synced with the page, and whether the site
 * under it is crawled, with its page and depth limits), or files: dropped or picked files are uploaded at once
 * (`POST /api/v1/media`, ../../lib/upload.ts), listed by name, and trained together, one source
 * each. The service answers at once (202) with the new documents `queued`, or the existing one
 * when the same source was trained before; a 400's issue (`sources.0.url`, `sources.2.key`)
 * shows at its field or file, and an upload's refusal (413, 415, 400) under the drop area.
 */
import {
  Button,
  Checkbox,
  CloseButton,
  Group,
  NumberInput,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { problemOf, type RouterInputs } from '../../lib/api.ts'
import { uploadProblemOf, type Upload } from '../../lib/upload.ts'
import { FileDrop } from '../../ui/FileDrop.tsx'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { REFRESH_OPTIONS, useTrain, useUploadFiles, type Refresh } from './api.ts'

type Source = RouterInputs['knowledge']['train']['sources'][number]
type Kind = Source['type']

const EMPTY = {
  name: '',
  text: '',
  url: '',
  refresh: 'never' as Refresh,
  crawl: false,
  maxPages: 50 as number | string,
  maxDepth: 2 as number | string,
}

/** Most sources one training takes (docs/api/knowledge.md). */
const SOURCES_MAX = 20

/** The types the service extracts text from (docs/api/knowledge.md), by MIME type and extension, for the file picker. */
const TRAINABLE: Record<string, string[]> = {
  'application/pdf': ['.pdf'],
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': ['.docx'],
  'text/plain': ['.txt'],
  'text/markdown': ['.md', '.markdown'],
  'text/csv': ['.csv'],
  'application/json': ['.json'],
  'text/html': ['.html', '.htm'],
}

/** A file uploaded and waiting to be trained, under the name the person knows it by. */
export interface UploadedFile {
  name: string
  upload: Upload
}

function toSources(kind: Kind, form: typeof EMPTY, files: UploadedFile[]): Source[] {
  if (kind === 'text') return [{ type: 'text', name: form.name, text: form.text }]
  if (kind === 'url') {
    // A blank number is sent as it is, so the service's 400 names the field rather than the form guessing a value.
    const crawl = form.crawl ? { crawl: { max_pages: form.maxPages as number, max_depth: form.maxDepth as number } } : {}
    return [{ type: 'url', url: form.url.trim(), refresh: form.refresh, ...crawl }]
  }
  return files.map(({ upload }) => ({ type: 'file', key: upload.key }))
}

const sizeFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 })
const sizeOf = (bytes: number) =>
  bytes < 1024 * 1024 ? `${sizeFormat.format(bytes / 1024)} KB` : `${sizeFormat.format(bytes / 1024 / 1024)} MB`

export function TrainForm({ agentUuid }: { agentUuid: string }) {
  const [kind, setKind] = useState<Kind>('text')
  const [form, setForm] = useState(EMPTY)
  const [files, setFiles] = useState<UploadedFile[]>([])
  const [fileNote, setFileNote] = useState<string | null>(null)
  const train = useTrain({
    onSuccess: (answer) => {
      const [document] = answer.data
      notifications.show({
        color: 'green',
        message:
          answer.data.length > 1
            ? `${answer.data.length} documents queued`
            : document
              ? `“${document.name}” is ${document.status}`
              : 'Training started',
      })
      setForm(EMPTY)
      setFiles([])
    },
  })
  const upload = useUploadFiles((name, stored) =>
    setFiles((current) => (current.length < SOURCES_MAX ? [...current, { name, upload: stored }] : current)),
  )
  const problem = train.error ? problemOf(train.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (train.isPending || upload.isPending) return
    if (kind === 'file' && files.length === 0) {
      setFileNote('Drop or choose a file first.')
      return
    }
    train.mutate({ agent_uuid: agentUuid, sources: toSources(kind, form, files) })
  }
  const addFiles = (picked: File[]) => {
    train.reset()
    const room = SOURCES_MAX - files.length
    setFileNote(
      picked.length > room ? `One training takes at most ${SOURCES_MAX} files: only the first ${Math.max(room, 0)} were taken.` : null,
    )
    if (room > 0) upload.mutate(picked.slice(0, room))
  }
  const fileFields = files.map((_, index) => `sources.${index}.key`)
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
              { value: 'file', label: 'Files' },
            ]}
            style={{ alignSelf: 'flex-start' }}
          />
          <FormProblem
            problem={problem}
            fields={[
              'sources.0.name',
              'sources.0.text',
              'sources.0.url',
              'sources.0.refresh',
              'sources.0.crawl',
              'sources.0.crawl.max_pages',
              'sources.0.crawl.max_depth',
              ...fileFields,
            ]}
          />
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
          {kind === 'url' ? (
            <Select
              label="Refresh"
              description="How often the page is fetched again to stay current"
              data={REFRESH_OPTIONS}
              value={form.refresh}
              allowDeselect={false}
              onChange={(value) => value && setForm((current) => ({ ...current, refresh: value as Refresh }))}
              error={fieldError(problem, 'sources.0.refresh')}
              w={320}
              comboboxProps={{ withinPortal: true }}
            />
          ) : null}
          {kind === 'url' ? (
            <Checkbox
              label="Crawl the site under this URL"
              description="Every page it links to on the same site and under the same folder becomes a document; robots.txt is honoured"
              checked={form.crawl}
              onChange={(event) => {
                const crawl = event.currentTarget.checked
                setForm((current) => ({ ...current, crawl }))
              }}
              error={fieldError(problem, 'sources.0.crawl')}
            />
          ) : null}
          {kind === 'url' && form.crawl ? (
            <Group gap="sm" align="start">
              <NumberInput
                label="Pages at most"
                description="The URL's page included: 1 to 500"
                min={1}
                max={500}
                value={form.maxPages}
                onChange={(value) => setForm((current) => ({ ...current, maxPages: value }))}
                error={fieldError(problem, 'sources.0.crawl.max_pages')}
                w={200}
              />
              <NumberInput
                label="Link depth"
                description="Links followed from the URL: 0 to 5"
                min={0}
                max={5}
                value={form.maxDepth}
                onChange={(value) => setForm((current) => ({ ...current, maxDepth: value }))}
                error={fieldError(problem, 'sources.0.crawl.max_depth')}
                w={200}
              />
            </Group>
          ) : null}
          {kind === 'file' ? (
            <>
              <FileDrop
                label="Files to train from"
                hint="PDF, DOCX, text, Markdown, HTML, CSV or JSON; each is uploaded at once and trained when you press the button."
                accept={TRAINABLE}
                multiple
                loading={upload.isPending}
                disabled={files.length >= SOURCES_MAX}
                error={upload.error ? uploadProblemOf(upload.error).message : fileNote}
                onFiles={addFiles}
              />
              {files.length ? (
                <Table.ScrollContainer minWidth={320}>
                  <Table aria-label="Files to train">
                    <Table.Tbody>
                      {files.map((file, index) => (
                        <Table.Tr key={file.upload.key}>
                          <Table.Td style={{ maxWidth: 360 }}>
                            <Text size="sm" fw={600} truncate="end" title={file.name}>
                              {file.name}
                            </Text>
                            <Text size="xs" c="dimmed">
                              {file.upload.mime_type} · {sizeOf(file.upload.size)}
                            </Text>
                            {fieldError(problem, `sources.${index}.key`) ? (
                              <Text size="xs" c="red">
                                {fieldError(problem, `sources.${index}.key`)}
                              </Text>
                            ) : null}
                          </Table.Td>
                          <Table.Td w={40}>
                            <CloseButton
                              aria-label={`Leave out ${file.name}`}
                              onClick={() => setFiles((current) => current.filter((item) => item.upload.key !== file.upload.key))}
                            />
                          </Table.Td>
                        </Table.Tr>
                      ))}
                    </Table.Tbody>
                  </Table>
                </Table.ScrollContainer>
              ) : null}
            </>
          ) : null}
          <Group>
            <Button type="submit" loading={train.isPending} disabled={upload.isPending}>
              {kind === 'file' && files.length > 1 ? `Train agent with ${files.length} files` : 'Train agent'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Paper>
  )
}
