/**
 * Portable agents (docs/api/versions.md, "Portable agents: export and import"): the agent screen's
 * "Export" downloads the agent's document (`agents.export`, `GET /api/v1/agents/{agent_uuid}/export`,
 * read permission is enough), and the agents list's "Import" makes an agent from a document
 * picked as a file or pasted (`agents.import`, `POST /api/v1/agents/import`), then shows what the
 * service warned about (a tool not bound, a file that did not travel) and leads to the new agent.
 */
import { Alert, Button, FileInput, Group, List, Modal, Stack, Text, Textarea } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { downloadJson } from '../../lib/download.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { describeProblem } from '../../ui/states.tsx'
import type { Agent } from './agentDraft.ts'
import { useExportAgent, useImportAgent, type ImportAnswer, type ImportInput } from './api.ts'

/** The file name the service gives the document (`<name as a slug>.agent.json`). */
export function documentFileName(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '')
  return `${slug || 'agent'}.agent.json`
}

/** Downloads the agent's portable document. */
export function ExportButton({ agent }: { agent: Agent }) {
  const exportAgent = useExportAgent({
    onSuccess: (document) => downloadJson(documentFileName(agent.name), document),
    onError: (error) => notifications.show({ color: 'red', title: describeProblem(error).title, message: describeProblem(error).detail }),
  })
  return (
    <Button variant="default" loading={exportAgent.isPending} onClick={() => exportAgent.mutate({ agent_uuid: agent.uuid })}>
      Export
    </Button>
  )
}

/** The agents list's "Import" button and its dialog. */
export function ImportButton() {
  const [opened, setOpened] = useState(false)
  return (
    <>
      <Button variant="default" onClick={() => setOpened(true)}>
        Import
      </Button>
      <Modal opened={opened} onClose={() => setOpened(false)} title="Import an agent" size="lg">
        {/* Mounted while open: each opening starts empty. */}
        {opened ? <ImportForm onClose={() => setOpened(false)} /> : null}
      </Modal>
    </>
  )
}

/** The document as JSON, or why it is not: the service checks everything else. */
function parseDocument(text: string): { document: ImportInput['document'] } | { error: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: 'An agent document is a JSON object.' }
  // Its fields are checked by the service, which names any problem by its path (`document.agent.name`).
  return { document: value as ImportInput['document'] }
}

function ImportForm({ onClose }: { onClose: () => void }) {
  const [file, setFile] = useState<File | null>(null)
  const [text, setText] = useState('')
  const [invalid, setInvalid] = useState<string | null>(null)
  const [done, setDone] = useState<ImportAnswer | null>(null)
  const importAgent = useImportAgent({ onSuccess: setDone })
  const problem = importAgent.error ? problemOf(importAgent.error) : null

  if (done) return <Imported answer={done} onClose={onClose} />

  const pick = (picked: File | null) => {
    setFile(picked)
    setInvalid(null)
    importAgent.reset()
    if (!picked) return
    picked
      .text()
      .then(setText, (error: unknown) =>
        setInvalid(`The file could not be read: ${error instanceof Error ? error.message : String(error)}`),
      )
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const parsed = parseDocument(text)
    if ('error' in parsed) {
      setInvalid(parsed.error)
      return
    }
    setInvalid(null)
    importAgent.mutate({ document: parsed.document })
  }
  return (
    <form onSubmit={submit} noValidate aria-label="Import an agent">
      <Stack>
        <Text size="sm">
          A document exported from an agent (“Export” on its screen), here or on another service. Its tools, workflows and text and URL
          knowledge are made with it, in this workspace; files do not travel, and a tool whose provider needs an account is made without
          one.
        </Text>
        <FileInput
          label="Document file"
          placeholder="Pick a .json file"
          accept="application/json,.json"
          value={file}
          onChange={pick}
          clearable
        />
        <Textarea
          label="Document (JSON)"
          description="The picked file's content, or paste a document here."
          autosize
          minRows={6}
          maxRows={14}
          value={text}
          onChange={(event) => {
            setText(event.currentTarget.value)
            setInvalid(null)
          }}
          error={invalid}
          styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', fontSize: 'var(--mantine-font-size-xs)' } }}
        />
        <FormProblem problem={problem} fields={[]} />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button type="submit" loading={importAgent.isPending} disabled={text.trim() === ''}>
            Import agent
          </Button>
        </Group>
      </Stack>
    </form>
  )
}

/** What the import made, and what the service warned about. */
function Imported({ answer, onClose }: { answer: ImportAnswer; onClose: () => void }) {
  const { data, warnings } = answer
  return (
    <Stack>
      <Alert color="green" title="Agent imported" role="status">
        <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
          “{data.name}” was made in this workspace.
        </Text>
      </Alert>
      {warnings.length ? (
        <div>
          <Text fw={600} size="sm" id="import-warnings">
            {warnings.length === 1 ? '1 warning' : `${warnings.length} warnings`}
          </Text>
          <List size="sm" spacing={4} aria-labelledby="import-warnings">
            {warnings.map((warning, index) => (
              <List.Item key={index} style={{ overflowWrap: 'anywhere' }}>
                {warning}
              </List.Item>
            ))}
          </List>
        </div>
      ) : (
        <Text size="sm" c="dimmed">
          No warnings.
        </Text>
      )}
      <Group justify="flex-end">
        <Button variant="default" onClick={onClose}>
          Close
        </Button>
        <Button component={Link} to={`/agents/${data.uuid}`} onClick={onClose}>
          Open the agent
        </Button>
      </Group>
    </Stack>
  )
}
