/**
 * A tool's dialog (`tools.create`, `tools.update`; docs/api/resources.md, "Tools", and
 * docs/api/mcp-tools.md): name, description, type (`api` or `mcp`, fixed once created), the tool
 * provider whose accounts agents bind to it (picked by name), for `api` tools the method, URL
 * template and input schema (JSON), for `mcp` tools the server's endpoint and the tools offered,
 * then `requires_approval`, `idempotent`, credits and visibility. The service's 400 is shown at
 * the fields it names; a schema that is not JSON is said at its field without being sent.
 */
import { Button, Group, Modal, NumberInput, Select, Stack, Switch, TagsInput, Textarea, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreateTool, useProviders, useUpdateTool, type Tool } from './api.ts'
import { TOOL_METHODS, VISIBILITIES, type ToolMethod, type ToolType, type Visibility } from './settings-model.ts'

const FIELDS = [
  'name',
  'description',
  'type',
  'provider_uuid',
  'method',
  'url',
  'input_schema',
  'allowed_tools',
  'requires_approval',
  'idempotent',
  'credits',
  'visibility',
]

const EMPTY_SCHEMA = '{\n  "type": "object",\n  "properties": {}\n}'

interface Draft {
  name: string
  description: string
  type: ToolType
  provider: string | null
  method: ToolMethod
  url: string
  schema: string
  allowedTools: string[]
  requiresApproval: boolean
  idempotent: boolean
  credits: number
  visibility: Visibility
}

const draftOf = (tool: Tool | null): Draft =>
  tool
    ? {
        name: tool.name,
        description: tool.description,
        type: tool.type === 'mcp' ? 'mcp' : 'api',
        provider: tool.provider?.uuid ?? null,
        method: TOOL_METHODS.find((method) => method === tool.method) ?? 'GET',
        url: tool.url,
        schema: JSON.stringify(tool.input_schema, null, 2),
        allowedTools: tool.allowed_tools ?? [],
        requiresApproval: tool.requires_approval,
        idempotent: tool.idempotent,
        credits: tool.credits,
        visibility: tool.visibility,
      }
    : {
        name: '',
        description: '',
        type: 'api',
        provider: null,
        method: 'GET',
        url: '',
        schema: EMPTY_SCHEMA,
        allowedTools: [],
        requiresApproval: false,
        idempotent: false,
        credits: 0,
        visibility: 'workspace',
      }

/** The schema as typed, parsed; a string says why it is not a JSON object. */
function parseSchema(text: string): Record<string, unknown> | string {
  try {
    const value: unknown = JSON.parse(text || '{}')
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'must be a JSON object'
  } catch (error) {
    return `not JSON: ${error instanceof Error ? error.message : String(error)}`
  }
}

/** `tool` null: a new one. Mounted per opening (its `key`), so the draft starts afresh. */
export function ToolModal({ tool, onClose }: { tool: Tool | null; onClose: () => void }) {
  const [draft, setDraft] = useState(() => draftOf(tool))
  const [schemaError, setSchemaError] = useState<string | null>(null)
  const providers = useProviders({ per_page: 100, sort: 'name', type: 'tool' })
  const create = useCreateTool({ onSuccess: onClose })
  const update = useUpdateTool({ onSuccess: onClose })
  const mutation = tool ? update : create
  const problem = mutation.error ? problemOf(mutation.error) : null
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch })
  const mcp = draft.type === 'mcp'
  const providerOptions = (providers.data?.data ?? []).map((provider) => ({ value: provider.uuid, label: provider.name }))
  if (tool?.provider && !providerOptions.some((option) => option.value === tool.provider?.uuid)) {
    providerOptions.push({ value: tool.provider.uuid, label: tool.provider.name })
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const schema = mcp ? {} : parseSchema(draft.schema)
    if (typeof schema === 'string') {
      setSchemaError(schema)
      return
    }
    setSchemaError(null)
    const body = {
      name: draft.name,
      description: draft.description.trim() || null,
      provider_uuid: draft.provider,
      url: draft.url.trim(),
      requires_approval: draft.requiresApproval,
      idempotent: draft.idempotent,
      credits: draft.credits,
      visibility: draft.visibility,
      ...(mcp
        ? { method: 'POST' as const, allowed_tools: draft.allowedTools.length ? draft.allowedTools : null }
        : { method: draft.method, input_schema: schema }),
    }
    if (tool) update.mutate({ tool_uuid: tool.uuid, ...body })
    else create.mutate({ ...body, type: draft.type })
  }
  return (
    <Modal opened onClose={onClose} title={tool ? `Edit ${tool.name}` : 'New tool'} size="lg">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={FIELDS} />
          <TextInput
            label="Name"
            required
            data-autofocus
            value={draft.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={fieldError(problem, 'name')}
          />
          <Textarea
            label="Description"
            description="What the tool does: the model reads it to decide when to call it"
            autosize
            minRows={2}
            value={draft.description}
            onChange={(e) => set({ description: e.currentTarget.value })}
            error={fieldError(problem, 'description')}
          />
          <Group grow align="flex-start">
            <Select
              label="Type"
              description={tool ? 'Fixed once created' : 'An HTTP operation, or the tools of an MCP server'}
              data={[
                { value: 'api', label: 'API (one HTTP operation)' },
                { value: 'mcp', label: 'MCP server' },
              ]}
              value={draft.type}
              onChange={(value) => set({ type: value === 'mcp' ? 'mcp' : 'api' })}
              allowDeselect={false}
              disabled={Boolean(tool)}
              error={fieldError(problem, 'type')}
              comboboxProps={{ withinPortal: true }}
            />
            <Select
              label="Provider"
              description="Agents bind one of its accounts to the tool"
              placeholder={providers.isPending ? 'Loading providers…' : providerOptions.length ? 'None' : 'No tool provider'}
              data={providerOptions}
              value={draft.provider}
              onChange={(value) => set({ provider: value })}
              clearable
              searchable
              error={fieldError(problem, 'provider_uuid')}
              comboboxProps={{ withinPortal: true }}
            />
          </Group>
          <Group align="flex-start" wrap="nowrap" gap="xs">
            {mcp ? null : (
              <Select
                label="Method"
                data={[...TOOL_METHODS]}
                value={draft.method}
                onChange={(value) => set({ method: TOOL_METHODS.find((m) => m === value) ?? 'GET' })}
                allowDeselect={false}
                w={110}
                error={fieldError(problem, 'method')}
                comboboxProps={{ withinPortal: true }}
              />
            )}
            <TextInput
              label={mcp ? 'Server URL' : 'URL'}
              description={mcp ? "The server's Streamable HTTP endpoint" : 'Its path and query may hold {{name}} placeholders'}
              required
              type="url"
              placeholder={mcp ? 'https://mcp.example.com/mcp' : 'https://api.example.com/weather?city={{city}}'}
              value={draft.url}
              onChange={(e) => set({ url: e.currentTarget.value })}
              error={fieldError(problem, 'url')}
              style={{ flex: 1, minWidth: 0 }}
            />
          </Group>
          {mcp ? (
            <TagsInput
              label="Tools offered"
              description="Names of the server's tools the model may call; none listed: all of them"
              value={draft.allowedTools}
              onChange={(allowedTools) => set({ allowedTools })}
              error={fieldError(problem, 'allowed_tools')}
              comboboxProps={{ withinPortal: true }}
            />
          ) : (
            <Textarea
              label="Input schema"
              description="A JSON Schema of the arguments (an object)"
              autosize
              minRows={4}
              maxRows={14}
              ff="monospace"
              value={draft.schema}
              onChange={(e) => set({ schema: e.currentTarget.value })}
              error={schemaError ?? fieldError(problem, 'input_schema')}
              styles={{ input: { fontFamily: 'monospace' } }}
            />
          )}
          <Switch
            label="Requires approval"
            description="Every call waits for a person to approve it (Approvals)"
            checked={draft.requiresApproval}
            onChange={(e) => set({ requiresApproval: e.currentTarget.checked })}
            error={fieldError(problem, 'requires_approval')}
          />
          <Switch
            label="Idempotent"
            description="A call is safe to repeat (sent again after an interruption)"
            checked={draft.idempotent}
            onChange={(e) => set({ idempotent: e.currentTarget.checked })}
            error={fieldError(problem, 'idempotent')}
          />
          <Group grow align="flex-start">
            <NumberInput
              label="Credits"
              description="Charged per call"
              min={0}
              max={1_000_000}
              decimalScale={4}
              value={draft.credits}
              onChange={(value) => set({ credits: typeof value === 'number' ? value : Number(value) || 0 })}
              error={fieldError(problem, 'credits')}
            />
            <Select
              label="Visibility"
              data={[...VISIBILITIES]}
              value={draft.visibility}
              onChange={(value) => set({ visibility: VISIBILITIES.find((v) => v === value) ?? 'workspace' })}
              allowDeselect={false}
              error={fieldError(problem, 'visibility')}
              comboboxProps={{ withinPortal: true }}
            />
          </Group>
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={mutation.isPending}>
              {tool ? 'Save tool' : 'Create tool'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}
