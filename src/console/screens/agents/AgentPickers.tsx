/**
 * The agent form's controls fed by other catalogues: the model (`largeLanguageModels.list`,
 * `GET /api/v1/large-language-models`), tools with the account each is called with
 * (`tools.list`, `accounts.list`), workflows (`workflows.list`) and categories
 * (`categories.list`). Each keeps what the agent already binds among its options, also when the
 * caller could not list it (bound rows are part of the agent, docs/api/resources.md, "References").
 * A model without a credential links to Settings → Model keys ("Add a key"), and an empty tool
 * catalogue to Settings → Tools, where they are made.
 */
import { ActionIcon, Anchor, Button, Group, MultiSelect, Paper, Select, Stack, Text, type ComboboxData } from '@mantine/core'
import { Link } from 'react-router'
import type { Problem } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { LINKS_MAX, type Agent, type ToolLink } from './agentDraft.ts'
import { useAccounts, useCategories, useModels, useTools, useWorkflowCatalogue } from './api.ts'

/** Options with the bound ones the list did not hold added at the end. */
function withBound(options: { value: string; label: string }[], bound: { value: string; label: string }[]) {
  const known = new Set(options.map((option) => option.value))
  return [...options, ...bound.filter((option) => !known.has(option.value))]
}

/** A note under a picker whose catalogue failed to load: the control still shows what is bound. */
const loadFailure = (error: unknown) => (error ? 'Could not load the choices; try again later.' : undefined)

export function ModelSelect({
  value,
  onChange,
  error,
  disabled,
}: {
  value: string
  onChange: (value: string) => void
  error?: string
  disabled?: boolean
}) {
  const models = useModels()
  const groups = new Map<string, { value: string; label: string }[]>()
  for (const model of models.data?.data ?? []) {
    const items = groups.get(model.provider.name) ?? []
    items.push({ value: model.slug, label: model.is_available ? model.name : `${model.name} (no credential)` })
    groups.set(model.provider.name, items)
  }
  const listed = (models.data?.data ?? []).some((model) => model.slug === value)
  const byUuid = (models.data?.data ?? []).find((model) => model.uuid === value.toLowerCase())
  // A stored model the catalogue does not list (a uuid, a deleted model) stays shown as it is.
  const data: ComboboxData = [
    ...[...groups].map(([group, items]) => ({ group, items })),
    ...(value && !listed ? [{ value, label: byUuid?.name ?? value }] : []),
  ]
  const chosen = (models.data?.data ?? []).find((model) => model.slug === value)
  const someLackKey = (models.data?.data ?? []).some((model) => !model.is_available)
  const addKey = (
    <Anchor component={Link} to="/settings/model-keys" size="xs">
      Add a key
    </Anchor>
  )
  return (
    <Select
      label="Model"
      description={
        chosen && !chosen.is_available ? (
          <>
            {chosen.name} has no credential in this workspace. {addKey}
          </>
        ) : someLackKey ? (
          <>The model runs of this agent use; empty: the workspace's default. A model marked “no credential” needs a key first: {addKey}</>
        ) : (
          "The model runs of this agent use; empty: the workspace's default."
        )
      }
      placeholder={models.isPending ? 'Loading models…' : "Workspace's default"}
      data={data}
      value={value || null}
      onChange={(next) => onChange(next ?? '')}
      searchable
      clearable
      nothingFoundMessage="No model matches"
      error={error ?? loadFailure(models.error)}
      disabled={disabled}
      comboboxProps={{ withinPortal: true }}
    />
  )
}

export function WorkflowPicker({
  agent,
  value,
  onChange,
  error,
}: {
  agent?: Agent
  value: string[]
  onChange: (value: string[]) => void
  error?: string
}) {
  const workflows = useWorkflowCatalogue()
  const data = withBound(
    (workflows.data?.data ?? []).map((workflow) => ({ value: workflow.uuid, label: workflow.name })),
    (agent?.workflows ?? []).map((workflow) => ({ value: workflow.uuid, label: workflow.name })),
  )
  return (
    <MultiSelect
      label="Workflows"
      description="Workflows the agent can start."
      placeholder={data.length ? 'Choose workflows' : 'No workflows in this workspace'}
      data={data}
      value={value}
      onChange={onChange}
      searchable
      clearable
      maxValues={LINKS_MAX}
      nothingFoundMessage="No workflow matches"
      error={error ?? loadFailure(workflows.error)}
      comboboxProps={{ withinPortal: true }}
    />
  )
}

export function CategoryPicker({
  agent,
  value,
  onChange,
  error,
}: {
  agent?: Agent
  value: string[]
  onChange: (value: string[]) => void
  error?: string
}) {
  const categories = useCategories()
  const data = withBound(
    (categories.data?.data ?? []).map((category) => ({ value: category.uuid, label: category.name })),
    (agent?.categories ?? []).map((category) => ({ value: category.uuid, label: category.name })),
  )
  return (
    <MultiSelect
      label="Categories"
      data={data}
      value={value}
      onChange={onChange}
      searchable
      clearable
      maxValues={LINKS_MAX}
      nothingFoundMessage="No category matches"
      error={error ?? loadFailure(categories.error)}
      comboboxProps={{ withinPortal: true }}
    />
  )
}

interface ToolOption {
  value: string
  label: string
  /** The tool's provider: an account of it may be bound. */
  providerUuid: string | null
}

/**
 * The agent's tools, in order, each with the account it is called with. `problem` issues name the
 * index sent (`tools.2.account_uuid`), which skips rows without a tool: `sentIndex` maps them back.
 */
export function ToolLinks({
  agent,
  links,
  onChange,
  problem,
}: {
  agent?: Agent
  links: ToolLink[]
  onChange: (links: ToolLink[]) => void
  problem: Problem | null
}) {
  const tools = useTools()
  const options: ToolOption[] = (tools.data?.data ?? []).map((tool) => ({
    value: tool.uuid,
    label: tool.name,
    providerUuid: tool.provider?.uuid ?? null,
  }))
  const known = new Set(options.map((option) => option.value))
  for (const tool of agent?.tools ?? []) {
    if (!known.has(tool.uuid)) options.push({ value: tool.uuid, label: tool.name, providerUuid: tool.provider?.uuid ?? null })
  }
  const boundAccounts = new Map((agent?.tools ?? []).filter((tool) => tool.pivot_account).map((tool) => [tool.uuid, tool.pivot_account!]))
  const setLink = (index: number, link: ToolLink) => onChange(links.map((old, i) => (i === index ? link : old)))
  let sent = 0
  return (
    <Stack gap="xs">
      <Text fw={500} size="sm">
        Tools
      </Text>
      {links.length === 0 ? (
        <Text size="sm" c="dimmed">
          No tools: the agent only talks.
        </Text>
      ) : null}
      {tools.data && tools.data.data.length === 0 ? (
        <Text size="sm" c="dimmed">
          This workspace has no tools yet.{' '}
          <Anchor component={Link} to="/settings/tools" size="sm">
            Create a tool in Settings
          </Anchor>
        </Text>
      ) : null}
      {links.map((link, index) => {
        const sentIndex = link.tool_uuid ? sent++ : -1
        const tool = options.find((option) => option.value === link.tool_uuid)
        return (
          <Paper key={index} withBorder p="xs">
            <Group align="end" gap="xs" wrap="wrap">
              <Select
                label={`Tool ${index + 1}`}
                data={options.filter(
                  (option) => option.value === link.tool_uuid || !links.some((other) => other.tool_uuid === option.value),
                )}
                value={link.tool_uuid || null}
                onChange={(uuid) => setLink(index, { tool_uuid: uuid ?? '', account_uuid: null })}
                searchable
                placeholder={tools.isPending ? 'Loading tools…' : 'Choose a tool'}
                nothingFoundMessage={options.length ? 'No tool matches' : 'No tools yet: create one in Settings → Tools'}
                error={sentIndex >= 0 ? fieldError(problem, `tools.${sentIndex}.tool_uuid`) : undefined}
                style={{ flex: '1 1 180px', minWidth: 0 }}
                comboboxProps={{ withinPortal: true }}
              />
              {tool?.providerUuid ? (
                <AccountSelect
                  toolName={tool.label}
                  providerUuid={tool.providerUuid}
                  bound={boundAccounts.get(link.tool_uuid)}
                  value={link.account_uuid}
                  onChange={(account) => setLink(index, { ...link, account_uuid: account })}
                  error={sentIndex >= 0 ? fieldError(problem, `tools.${sentIndex}.account_uuid`) : undefined}
                />
              ) : null}
              <ActionIcon
                variant="subtle"
                color="red"
                size="lg"
                aria-label={`Remove tool ${index + 1}${tool ? ` (${tool.label})` : ''}`}
                onClick={() => onChange(links.filter((_, i) => i !== index))}
              >
                ×
              </ActionIcon>
            </Group>
          </Paper>
        )
      })}
      {problem?.fields.tools ? (
        <Text c="red" size="sm" role="alert">
          {problem.fields.tools}
        </Text>
      ) : null}
      {tools.error ? (
        <Text c="red" size="sm">
          {loadFailure(tools.error)}
        </Text>
      ) : null}
      <Group>
        <Button
          variant="light"
          size="xs"
          disabled={links.length >= LINKS_MAX}
          onClick={() => onChange([...links, { tool_uuid: '', account_uuid: null }])}
        >
          Add tool
        </Button>
      </Group>
    </Stack>
  )
}

function AccountSelect({
  toolName,
  providerUuid,
  bound,
  value,
  onChange,
  error,
}: {
  toolName: string
  providerUuid: string
  bound?: { uuid: string; name: string; secret_hint: string | null }
  value: string | null
  onChange: (value: string | null) => void
  error?: string
}) {
  const accounts = useAccounts(providerUuid)
  const label = (name: string, hint: string | null) => (hint ? `${name} (${hint})` : name)
  const data = withBound(
    (accounts.data?.data ?? []).map((account) => ({ value: account.uuid, label: label(account.name, account.secret_hint) })),
    bound ? [{ value: bound.uuid, label: label(bound.name, bound.secret_hint) }] : [],
  )
  return (
    <Select
      label="Account"
      aria-label={`Account for ${toolName}`}
      data={data}
      value={value}
      onChange={onChange}
      clearable
      placeholder={accounts.isPending ? 'Loading accounts…' : data.length ? 'None' : 'No account of its provider'}
      error={error ?? loadFailure(accounts.error)}
      style={{ flex: '1 1 160px', minWidth: 0 }}
      comboboxProps={{ withinPortal: true }}
    />
  )
}
