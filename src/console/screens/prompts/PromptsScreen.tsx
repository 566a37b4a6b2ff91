/**
 * Prompts: the list with search and a visibility filter (`prompts.list`, `GET /api/v1/prompts`),
 * each row leading to its edit screen, and "New prompt", a dialog that creates one
 * (`prompts.create`, `POST /api/v1/prompts`) and then opens it, since inputs, model and the run
 * form live on the edit screen.
 */
import { Badge, Button, Group, Table, Text } from '@mantine/core'
import { useDebouncedValue, useDisclosure } from '@mantine/hooks'
import { keepPreviousData, useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { Link } from 'react-router'
import { api, type RouterInputs } from '../../lib/api.ts'
import { Pager, ScreenTitle, SearchField, VisibilityFilter, type VisibilityChoice } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { CreatePromptModal } from './CreatePromptModal.tsx'

type ListInput = Exclude<RouterInputs['prompts']['list'], void | undefined>

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

export default function PromptsScreen() {
  const [search, setSearch] = useState('')
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [visibility, setVisibility] = useState<VisibilityChoice>('all')
  const [page, setPage] = useState(1)
  const [creating, { open, close }] = useDisclosure(false)
  const input: ListInput = {
    page,
    per_page: 20,
    sort: '-created_at',
    ...(debounced ? { search: debounced } : {}),
    ...(visibility !== 'all' ? { visibility } : {}),
  }
  const prompts = useQuery({
    queryKey: ['prompts.list', input],
    queryFn: () => api.prompts.list.query(input),
    placeholderData: keepPreviousData,
  })
  const filtered = Boolean(debounced) || visibility !== 'all'
  return (
    <>
      <ScreenTitle title="Prompts">
        <Button onClick={open}>New prompt</Button>
      </ScreenTitle>
      <CreatePromptModal opened={creating} onClose={close} />
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
      </Group>
      {prompts.isPending ? <Loading label="Loading prompts" /> : null}
      {prompts.error ? <ErrorNotice error={prompts.error} onRetry={() => void prompts.refetch()} /> : null}
      {prompts.data && prompts.data.data.length === 0 ? (
        <Empty title={filtered ? 'No prompt matches' : 'No prompts yet'}>
          {filtered ? 'Change the search or the filter.' : 'Create one: a template with inputs, run with a form.'}
        </Empty>
      ) : null}
      {prompts.data && prompts.data.data.length > 0 ? (
        <Table.ScrollContainer minWidth={520}>
          <Table striped highlightOnHover>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Inputs</Table.Th>
                <Table.Th>Visibility</Table.Th>
                <Table.Th>Updated</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {prompts.data.data.map((prompt) => (
                <Table.Tr key={prompt.uuid}>
                  <Table.Td style={{ maxWidth: 360 }}>
                    <Text component={Link} to={`/prompts/${prompt.uuid}`} fw={600} truncate="end" display="block" title={prompt.name}>
                      {prompt.profile_photo_config?.emoji ? `${prompt.profile_photo_config.emoji} ` : ''}
                      {prompt.name}
                    </Text>
                    <Text size="sm" c="dimmed" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
                      {prompt.description}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
                      {prompt.metadata.input.length ? prompt.metadata.input.map((field) => field.label).join(', ') : 'None'}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge variant="light">{prompt.visibility}</Badge>
                  </Table.Td>
                  <Table.Td>
                    <Text size="sm">{dateFormat.format(new Date(prompt.updated_at))}</Text>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      ) : null}
      {prompts.data ? <Pager page={page} lastPage={prompts.data.meta.last_page} onChange={setPage} /> : null}
    </>
  )
}
