/**
 * Knowledge (docs/api/knowledge.md): pick an agent (`agents.list`, `agents.retrieve`; kept in the
 * address as `?agent=<uuid>` so a link can open it), train it from a text, a URL or files dropped
 * on the screen (uploaded with `POST /api/v1/media`, then `knowledge.train`, ./TrainForm.tsx), and
 * follow its documents with their ingestion status, refreshed while any is queued or processing
 * (`knowledge.list`, `knowledge.delete`, `knowledge.retry`, ./DocumentList.tsx).
 */
import { Alert, Anchor, Select, Stack, Text } from '@mantine/core'
import { Link, useSearchParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { useAgent, useAgentChoices } from '../agents/api.ts'
import { DocumentList } from './DocumentList.tsx'
import { TrainForm } from './TrainForm.tsx'

export default function KnowledgeScreen() {
  const [params, setParams] = useSearchParams()
  const agentUuid = params.get('agent') ?? ''
  const agents = useAgentChoices()
  const agent = useAgent(agentUuid === '' ? null : agentUuid)
  const options = (agents.data?.data ?? []).map((a) => ({ value: a.uuid, label: a.name }))
  // The agent named in the address may be beyond the first page of the picker.
  if (agent.data && !options.some((option) => option.value === agentUuid))
    options.unshift({ value: agentUuid, label: agent.data.data.name })
  const pick = (uuid: string | null) => setParams(uuid ? { agent: uuid } : {}, { replace: false })
  return (
    <>
      <ScreenTitle title="Knowledge" />
      <Text c="dimmed" size="sm" mb="md">
        Train an agent with texts, web pages and files; its runs answer from them when its knowledge setting is on.
      </Text>
      {agents.isPending ? <Loading label="Loading agents" /> : null}
      {agents.error ? <ErrorNotice error={agents.error} onRetry={() => void agents.refetch()} /> : null}
      {agents.data && agents.data.data.length === 0 && !agentUuid ? (
        <Empty title="No agents yet">
          <Anchor component={Link} to="/agents/new">
            Create an agent
          </Anchor>{' '}
          to train it.
        </Empty>
      ) : null}
      {agents.data && (agents.data.data.length > 0 || agentUuid) ? (
        <Select
          label="Agent"
          placeholder="Choose an agent"
          data={options}
          value={agentUuid || null}
          onChange={pick}
          searchable
          nothingFoundMessage="No agent of that name"
          maw={480}
          mb="lg"
          comboboxProps={{ withinPortal: true }}
        />
      ) : null}
      {agentUuid && agent.isPending ? <Loading label="Loading the agent" /> : null}
      {agentUuid && agent.error ? <ErrorNotice error={agent.error} onRetry={() => void agent.refetch()} /> : null}
      {agent.data ? (
        <Stack gap="xl">
          {agent.data.data.metadata.knowledge !== true ? (
            <Alert color="blue" title="Knowledge is off for this agent">
              Its runs do not use what it is trained on until “knowledge” is turned on in{' '}
              <Anchor component={Link} to={`/agents/${agentUuid}`} inherit>
                its settings
              </Anchor>
              .
            </Alert>
          ) : null}
          <TrainForm agentUuid={agentUuid} />
          <DocumentList agentUuid={agentUuid} />
        </Stack>
      ) : null}
    </>
  )
}
