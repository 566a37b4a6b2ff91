/**
 * Agents: the list with search and filters (visibility, favourites; a star marks the caller's favourites), each row leading to its edit
 * screen and to a chat with it (`GET /api/v1/agents`).
 */
import { Badge, Button, Group, Switch, Table, Text, VisuallyHidden } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'react-router'
import { api } from '../../lib/api.ts'
import { Pager, ScreenTitle, SearchField, VisibilityFilter, type VisibilityChoice } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'


export default function AgentsScreen() {
  const [search, setSearch] = useState('')
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [visibility, setVisibility] = useState<VisibilityChoice>('all')
  const [favorite, setFavorite] = useState(false)
  const [page, setPage] = useState(1)
  const input = {
    page,
    per_page: 20,
    sort: '-created_at' as const,
    ...(debounced ? { search: debounced } : {}),
    ...(visibility !== 'all' ? { visibility } : {}),
    ...(favorite ? { favorite: true } : {}),
  }
  const agents = useQuery({ queryKey: ['agents.list', input], queryFn: () => api.agents.list.query(input), placeholderData: keepPreviousData })
  return (
    <>
      <ScreenTitle title="Agents">
        <Button component={Link} to="/agents/new">
          New agent
        </Button>
      </ScreenTitle>
      <Group mb="md" gap="sm" wrap="wrap" align="end">
        <SearchField
          value={search}
          onChange={(value) => {
            setSearch(value)
            setPage(1)
          }}
        />
        <VisibilityFilter
          value={visibility}
          onChange={(value) => {
            setVisibility(value)
            setPage(1)
          }}
        />
        <Switch label="Favourites only" checked={favorite} onChange={(event) => setFavorite(event.currentTarget.checked)} />
      </Group>
      {agents.isPending ? <Loading label="Loading agents" /> : null}
      {agents.error ? <ErrorNotice error={agents.error} onRetry={() => void agents.refetch()} /> : null}
      {agents.data && agents.data.data.length === 0 ? (
        <Empty title={debounced || visibility !== 'all' || favorite ? 'No agent matches' : 'No agents yet'}>
          {debounced || visibility !== 'all' || favorite ? 'Change the search or the filters.' : 'Create one to chat with it.'}
        </Empty>
      ) : null}
      {agents.data && agents.data.data.length > 0 ? (
        <Table.ScrollContainer minWidth={480}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Model</Table.Th>
                <Table.Th>Visibility</Table.Th>
                <Table.Th>
                  <VisuallyHidden>Actions</VisuallyHidden>
                </Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {agents.data.data.map((agent) => (
                <Table.Tr key={agent.uuid}>
                  <Table.Td style={{ maxWidth: 360 }}>
                    <Group gap={4} wrap="nowrap">
                      {agent.is_favorite ? (
                        <Text span c="yellow.7" aria-label="Favourite" role="img">
                          ★
                        </Text>
                      ) : null}
                      <Text component={Link} to={`/agents/${agent.uuid}`} fw={600} truncate="end" display="block" title={agent.name} style={{ minWidth: 0 }}>
                        {agent.name}
                      </Text>
                    </Group>
                    <Text size="sm" c="dimmed" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
                      {agent.description}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{agent.metadata?.large_language_model ?? "default"}</Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light">{agent.visibility}</Badge>
                  </Table.Td>
                  <Table.Td>
                    <Button size="xs" variant="light" component={Link} to={`/chat/${agent.uuid}`} aria-label={`Chat with ${agent.name}`}>
                      Chat
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      ) : null}
      {agents.data ? <Pager page={page} lastPage={agents.data.meta.last_page} onChange={setPage} /> : null}
    </>
  )
}
