/**
 * `/chat`: choose the agent to chat with, in a Select searched on the service (`agents.list` with
 * `search`, most used first), which opens `/chat/<agent>`.
 */
import { Button, Select, Text } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { useAgents } from '../agents/api.ts'

export function AgentPicker() {
  const navigate = useNavigate()
  const [search, setSearch] = useState('')
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const input = { per_page: 50, sort: '-usage_count' as const, ...(debounced ? { search: debounced } : {}) }
  const agents = useAgents(input)
  const list = agents.data?.data ?? []
  return (
    <>
      <ScreenTitle title="Chat" />
      {agents.error ? <ErrorNotice error={agents.error} onRetry={() => void agents.refetch()} /> : null}
      {agents.isPending ? <Loading label="Loading agents" /> : null}
      {agents.data && list.length === 0 && !debounced ? (
        <Empty title="No agents yet">
          <Text span>Create an agent to chat with it. </Text>
          <Button component={Link} to="/agents/new" variant="light" size="xs" mt="xs">
            New agent
          </Button>
        </Empty>
      ) : null}
      {agents.data && (list.length > 0 || debounced) ? (
        <Select
          label="Agent"
          description="Type to search your agents; pick one to open its threads."
          placeholder="Choose an agent"
          searchable
          searchValue={search}
          onSearchChange={setSearch}
          // The service searched already: show what it answered.
          filter={({ options }) => options}
          nothingFoundMessage={agents.isFetching ? 'Searching…' : 'No agent matches'}
          data={list.map((agent) => ({ value: agent.uuid, label: agent.name }))}
          onChange={(uuid) => uuid && void navigate(`/chat/${uuid}`)}
          renderOption={({ option }) => (
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              {option.label}
            </Text>
          )}
          maw={520}
          comboboxProps={{ withinPortal: true }}
        />
      ) : null}
    </>
  )
}
