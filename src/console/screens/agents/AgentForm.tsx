/**
 * The agent form: its sections in an accordion (so it stays usable at 360 px), saved with
 * `agents.create` (`POST /api/v1/agents`) or `agents.update` (`PUT /api/v1/agents/{agent_uuid}`,
 * only the changed fields). A 400's issues show at their fields and open the sections holding
 * them; issues at no field, a 403 (read permission only) and any other failure show in an alert
 * beside the save button, where the person who pressed it looks.
 */
import { Accordion, Alert, Badge, Button, Group, Paper, Stack, Text } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useCallback, useState, type FormEvent, type JSX } from 'react'
import { useNavigate } from 'react-router'
import { problemOf, type Problem } from '../../lib/api.ts'
import { otherIssues } from '../../ui/forms.ts'
import { describeStatus } from '../../ui/states.tsx'
import { useCreateAgent, useUpdateAgent } from './api.ts'
import { createInput, draftOf, emptyDraft, isDirty, updateInput, type Agent, type Draft } from './agentDraft.ts'
import {
  AppearanceSection,
  BasicsSection,
  CapabilitiesSection,
  ExtraSection,
  PersonaSection,
  SECTION_TITLES,
  sectionFields,
  type SectionKey,
  type SectionProps,
} from './AgentSections.tsx'

const SECTIONS: [SectionKey, (props: SectionProps) => JSX.Element][] = [
  ['basics', BasicsSection],
  ['persona', PersonaSection],
  ['capabilities', CapabilitiesSection],
  ['appearance', AppearanceSection],
  ['extra', ExtraSection],
]

/** How many of `problem`'s issues sit at (or below) one of `fields`. */
const issuesAt = (problem: Problem | null, fields: string[]) =>
  problem ? Object.keys(problem.fields).filter((key) => fields.some((field) => key === field || key.startsWith(`${field}.`))).length : 0

/** The failure of a save no field shows: the other issues of a 400, else the status in words. */
function SaveProblem({ problem, shown }: { problem: Problem | null; shown: string[] }) {
  if (!problem) return null
  const others = otherIssues(problem, shown)
  if (problem.status === 400 && others.length === 0) {
    return (
      <Alert color="red" title="Check the form" role="alert">
        The fields marked in red need a change.
      </Alert>
    )
  }
  const { title, detail } = describeStatus(problem)
  const notAllowed = problem.status === 403
  return (
    <Alert color="red" title={problem.status === 400 ? 'Check the form' : notAllowed ? 'Not allowed to change this agent' : title} role="alert">
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {others.length ? others.join('; ') : notAllowed ? `Saving needs write permission on the agent; you can view and chat with it. ${problem.message}` : detail}
      </Text>
    </Alert>
  )
}

/**
 * `open` and `setOpen` (the sections shown) may be held by the screen, so they outlive the form,
 * which restarts after each save.
 */
export function AgentForm({
  agent,
  open: heldOpen,
  setOpen: setHeldOpen,
  onSaved,
}: {
  agent?: Agent
  open?: string[]
  setOpen?: (open: string[] | ((current: string[]) => string[])) => void
  /** Called after an update was stored (the screen then restarts the form from the answer). */
  onSaved?: () => void
}) {
  const navigate = useNavigate()
  // The form restarts from the stored agent after each of its saves (the screen keys it by them).
  const [initial] = useState<Draft>(() => (agent ? draftOf(agent) : emptyDraft()))
  const [draft, setDraft] = useState<Draft>(initial)
  const [ownOpen, setOwnOpen] = useState<string[]>(['basics'])
  const open = heldOpen ?? ownOpen
  const setOpen = setHeldOpen ?? setOwnOpen
  const change = useCallback((update: (latest: Draft) => Partial<Draft>) => setDraft((latest) => ({ ...latest, ...update(latest) })), [])
  const fieldsBySection = sectionFields(draft)
  const shown = Object.values(fieldsBySection).flat()

  // A refusal opens the sections holding its issues.
  const onError = (error: unknown) => {
    const problem = problemOf(error)
    const withIssues = SECTIONS.map(([key]) => key).filter((key) => issuesAt(problem, fieldsBySection[key]) > 0)
    if (withIssues.length) setOpen((current) => [...new Set([...current, ...withIssues])])
  }
  const create = useCreateAgent({
    onSuccess: (answer) => {
      notifications.show({ color: 'green', message: 'Agent created' })
      void navigate(`/agents/${answer.data.uuid}`, { replace: true })
    },
    onError,
  })
  const update = useUpdateAgent({
    onSuccess: () => {
      notifications.show({ color: 'green', message: 'Agent saved' })
      onSaved?.()
    },
    onError,
  })
  const save = agent ? update : create
  const problem = save.error ? problemOf(save.error) : null
  const dirty = isDirty(initial, draft)

  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (agent) update.mutate(updateInput(agent.uuid, initial, draft))
    else create.mutate(createInput(draft))
  }
  return (
    <form onSubmit={submit} noValidate aria-label={agent ? 'Edit agent' : 'New agent'}>
      <Stack>
        <Accordion multiple value={open} onChange={setOpen} variant="separated" keepMountedMode="display-none">
          {SECTIONS.map(([key, Section]) => {
            const count = issuesAt(problem, fieldsBySection[key])
            return (
              <Accordion.Item key={key} value={key}>
                <Accordion.Control>
                  <Group gap="xs" wrap="nowrap">
                    <Text fw={600}>{SECTION_TITLES[key]}</Text>
                    {count ? (
                      <Badge color="red" variant="light">
                        {count === 1 ? '1 issue' : `${count} issues`}
                      </Badge>
                    ) : null}
                  </Group>
                </Accordion.Control>
                <Accordion.Panel>
                  <Section draft={draft} change={change} problem={problem} agent={agent} />
                </Accordion.Panel>
              </Accordion.Item>
            )
          })}
        </Accordion>
        <Paper withBorder p="sm">
          <Stack gap="xs">
            <SaveProblem problem={problem} shown={shown} />
            <Group justify="space-between" wrap="wrap" gap="xs">
              <Text size="sm" c="dimmed" aria-live="polite">
                {save.isPending ? 'Saving…' : dirty ? 'Unsaved changes' : agent ? 'All changes saved' : ''}
              </Text>
              <Group gap="xs">
                {agent ? (
                  <Button
                    variant="default"
                    disabled={!dirty || save.isPending}
                    onClick={() => {
                      setDraft(initial)
                      save.reset()
                    }}
                  >
                    Discard changes
                  </Button>
                ) : (
                  <Button variant="default" onClick={() => void navigate('/agents')}>
                    Cancel
                  </Button>
                )}
                <Button type="submit" loading={save.isPending}>
                  {agent ? 'Save' : 'Create agent'}
                </Button>
              </Group>
            </Group>
          </Stack>
        </Paper>
      </Stack>
    </form>
  )
}
