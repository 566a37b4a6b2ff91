/**
 * A manual run (`workflows.run`, `POST /api/v1/workflows/{workflow_uuid}/run`): the input as
 * JSON (the manual trigger's output), then the execution the service answers once it ended, node
 * by node, with a link to it among the workflow's executions. From the editor (`onStarted`), the
 * run is queued (`background: true`) and the dialog closes at once: the editor follows the
 * execution on its canvas. A run needs only read access and runs inactive workflows too; it runs
 * the stored graph, not unsaved edits.
 */
import { Anchor, Button, Group, Modal, Stack, Text, Textarea } from '@mantine/core'
import { useMediaQuery } from '@mantine/hooks'
import { useState, type FormEvent } from 'react'
import { Link } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { ErrorNotice } from '../../ui/states.tsx'
import { useRunWorkflow } from './api.ts'
import { ExecutionView } from './ExecutionView.tsx'

/** Reads the input box: empty is null, else JSON; undefined with a message when it is not JSON. */
function parseInput(text: string): { value: unknown; error?: string } {
  if (!text.trim()) return { value: null }
  try {
    return { value: JSON.parse(text) }
  } catch (error) {
    return { value: undefined, error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
}

export function RunDialog({
  workflow,
  opened,
  onClose,
  note,
  onStarted,
}: {
  workflow: { uuid: string; name: string }
  opened: boolean
  onClose: () => void
  /** Said above the input (the editor's "unsaved changes are not run"). */
  note?: string
  /** Queue the run and hand its execution over, rather than wait for it and show it here. */
  onStarted?: (executionUuid: string) => void
}) {
  const narrow = useMediaQuery('(max-width: 48em)')
  const [text, setText] = useState('{}')
  const [parseError, setParseError] = useState<string>()
  const run = useRunWorkflow()
  const problem = run.error ? problemOf(run.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const parsed = parseInput(text)
    setParseError(parsed.error)
    if (parsed.error || run.isPending) return
    if (!onStarted) return run.mutate({ workflow_uuid: workflow.uuid, input: parsed.value })
    run.mutate(
      { workflow_uuid: workflow.uuid, input: parsed.value, background: true },
      {
        onSuccess: (answer) => {
          onStarted(answer.data.uuid)
          close()
        },
      },
    )
  }
  const close = () => {
    run.reset()
    setParseError(undefined)
    onClose()
  }
  const execution = run.data?.data
  return (
    <Modal opened={opened} onClose={close} title={`Run ${workflow.name}`} size="xl" fullScreen={narrow} styles={{ title: { overflowWrap: 'anywhere', minWidth: 0 } }}>
      <form onSubmit={submit} noValidate>
        <Stack>
          {note ? (
            <Text size="sm" c="dimmed">
              {note}
            </Text>
          ) : null}
          <Textarea
            label="Input (JSON)"
            description="What the trigger passes on; empty means null."
            autosize
            minRows={3}
            maxRows={12}
            value={text}
            onChange={(event) => setText(event.currentTarget.value)}
            error={parseError ?? fieldError(problem, 'input')}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          {problem && problem.status !== 400 ? <ErrorNotice error={run.error} /> : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Close
            </Button>
            <Button type="submit" loading={run.isPending}>
              Run
            </Button>
          </Group>
        </Stack>
      </form>
      {execution ? (
        <Stack mt="lg" gap="sm" aria-live="polite">
          <Group justify="space-between" wrap="wrap">
            <Text fw={600}>Execution</Text>
            <Anchor component={Link} to={`/workflows/${workflow.uuid}/executions?execution=${execution.uuid}`} size="sm">
              Open among the executions
            </Anchor>
          </Group>
          <ExecutionView execution={execution} />
        </Stack>
      ) : null}
    </Modal>
  )
}
