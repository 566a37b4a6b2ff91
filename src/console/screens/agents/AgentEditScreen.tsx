/**
 * One agent: `/agents/new` creates one (`agents.create`, `POST /api/v1/agents`), `/agents/:agentUuid`
 * reads it (`agents.retrieve`, `GET /api/v1/agents/{agent_uuid}`) and edits every field of
 * "Update an Agent" (`agents.update`), shares it (`agents.share`), adds it to or removes it from
 * the caller's favourites (`agents.favorite` / `agents.unfavorite`), deletes it after a
 * confirmation (`agents.delete`), leads to a chat with it and downloads its portable document
 * (./AgentPortable.tsx). Its current version is shown by the title, and its versions under the
 * form (./AgentVersions.tsx). An unknown uuid, or another tenant's, says "Not found" in words; an
 * agent the caller may only read opens with a note, and saving it says the change needs write
 * permission.
 */
import { Alert, Anchor, Badge, Button, Group, Modal, Stack, Text, Title } from '@mantine/core'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { describeProblem, describeStatus, ErrorNotice, Loading } from '../../ui/states.tsx'
import type { Agent } from './agentDraft.ts'
import { useAgent, useDeleteAgent, useFavoriteToggle } from './api.ts'
import { AgentForm } from './AgentForm.tsx'
import { ExportButton } from './AgentPortable.tsx'
import { AgentSharing } from './AgentSharing.tsx'
import { AgentVersions } from './AgentVersions.tsx'

export default function AgentEditScreen() {
  const { agentUuid } = useParams()
  if (!agentUuid) {
    return (
      <>
        <BackLink />
        <ScreenTitle title="New agent" />
        <AgentForm />
      </>
    )
  }
  return <EditAgent uuid={agentUuid} />
}

function BackLink() {
  return (
    <Anchor component={Link} to="/agents" size="sm" mb="xs" display="inline-block">
      ← Agents
    </Anchor>
  )
}

/** What ErrorNotice says for a 404, for an address that cannot name an agent. */
function NotFound() {
  const { title, detail } = describeStatus({ status: 404, message: '', fields: {}, issues: [] })
  return (
    <Alert color="red" title={title} role="alert" my="sm">
      {detail}
    </Alert>
  )
}

/** A uuid the service would refuse with a 400 is not an agent either: say "Not found" without asking. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function EditAgent({ uuid }: { uuid: string }) {
  const valid = UUID.test(uuid)
  const [open, setOpen] = useState<string[]>(['basics'])
  const [saves, setSaves] = useState(0)
  const agent = useAgent(valid ? uuid : null)
  if (!valid) {
    return (
      <>
        <BackLink />
        <NotFound />
      </>
    )
  }
  if (agent.isPending) return <Loading label="Loading the agent" />
  if (agent.error) {
    return (
      <>
        <BackLink />
        <ErrorNotice error={agent.error} onRetry={problemOf(agent.error).status === 404 ? undefined : () => void agent.refetch()} />
      </>
    )
  }
  const data = agent.data.data
  return (
    <Stack gap="md">
      <div>
        <BackLink />
        {/* A name may be 255 characters without a space: at most three lines here, whole in the Name field. */}
        <Title order={2} lineClamp={3} title={data.name} style={{ overflowWrap: 'anywhere' }}>
          {data.name}
        </Title>
        <Group gap="xs" my="sm" wrap="wrap">
          <AgentActions agent={data} />
        </Group>
        <Group gap="xs" wrap="wrap">
          <Badge variant="outline" tt="none" title={`Current version: ${data.version}`}>
            v{data.version}
          </Badge>
          <Badge variant="light">{data.visibility}</Badge>
          {data.is_template ? <Badge variant="light">template</Badge> : null}
          <Text size="xs" c="dimmed">
            {data.threads_count} chats · {data.usage_count} runs · used {data.usage_frequency}
          </Text>
        </Group>
      </div>
      {data.is_owner ? null : (
        <Alert color="blue" title="Shared with you" role="note">
          <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
            {data.user ? `${data.user.name} owns this agent. ` : ''}Changing it needs write permission; sharing and deleting need admin. If you
            hold only read permission, saving says so and nothing changes.
          </Text>
        </Alert>
      )}
      {/*
        Keyed by its own saves and restores: after one, the form starts again from what was stored. A
        refetch (another tab's change) does not reset what is being typed; the update sends only the changes.
      */}
      <AgentForm key={`${data.uuid}:${saves}`} agent={data} open={open} setOpen={setOpen} onSaved={() => setSaves((n) => n + 1)} />
      <AgentVersions agent={data} onRestored={() => setSaves((n) => n + 1)} />
      <AgentSharing agent={data} />
    </Stack>
  )
}

/** Chat, favourite, export and delete: the buttons of the screen's title row. */
function AgentActions({ agent }: { agent: Agent }) {
  const navigate = useNavigate()
  const [confirming, setConfirming] = useState(false)
  const favorite = useFavoriteToggle(agent, {
    onError: (error) => notifications.show({ color: 'red', title: describeProblem(error).title, message: describeProblem(error).detail }),
  })
  const remove = useDeleteAgent({
    onSuccess: () => {
      notifications.show({ color: 'green', message: 'Agent deleted' })
      void navigate('/agents', { replace: true })
    },
  })
  const removeProblem = remove.error ? problemOf(remove.error) : null
  return (
    <>
      <Button component={Link} to={`/chat/${agent.uuid}`}>
        Chat
      </Button>
      <Button variant="default" aria-pressed={agent.is_favorite} loading={favorite.isPending} onClick={() => favorite.mutate({ agent_uuid: agent.uuid })}>
        {agent.is_favorite ? '★ Favourite' : '☆ Add to favourites'}
      </Button>
      <ExportButton agent={agent} />
      <Button variant="light" color="red" onClick={() => setConfirming(true)}>
        Delete
      </Button>
      <Modal
        opened={confirming}
        onClose={() => {
          setConfirming(false)
          remove.reset()
        }}
        title="Delete this agent?"
      >
        <Stack>
          <Text style={{ overflowWrap: 'anywhere' }}>
            “{agent.name}” will be deleted, for you and for everyone it is shared with.
          </Text>
          {removeProblem ? (
            <Alert color="red" role="alert" title={removeProblem.status === 403 ? 'Not allowed to delete this agent' : describeProblem(remove.error).title}>
              <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
                {removeProblem.status === 403 ? `Deleting needs admin permission on the agent. ${removeProblem.message}` : describeProblem(remove.error).detail}
              </Text>
            </Alert>
          ) : null}
          <Group justify="end">
            <Button variant="default" onClick={() => setConfirming(false)}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate({ agent_uuid: agent.uuid })}>
              Delete agent
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}
