/**
 * The parameter form's own fields (rjsf custom fields, named by ./formSchema.ts):
 * - `keyValue`: a map (Set's values, HTTP headers, a prompt's input) as rows of a key and a value,
 *   each value of a kind the map takes (text, number, yes/no, JSON); text starting with `=` is an
 *   expression, and where the schema allows it the whole map is one expression instead;
 * - `resource`: an account, agent or prompt picked by name (`accounts.list`, `agents.list`,
 *   `prompts.list`, the first 100 by name), stored as its uuid; an account only of the provider
 *   the schema names, when it names one.
 * Errors of the field (as one types, and the last save's issues) are shown at the row they name.
 */
import { Button, CloseButton, Group, Input, Select, Stack, Switch, Text, TextInput } from '@mantine/core'
import type { ErrorSchema, FieldProps } from '@rjsf/utils'
import { useEffect, useState } from 'react'
import { useAccountChoices, useAgentChoices, usePromptChoices } from './api.ts'
import { sentence, type Resource, type ValueKind } from './formSchema.ts'

/** Every message of an error schema, those below the field prefixed with where they are. */
export function messagesOf(errors: ErrorSchema | undefined, prefix = ''): string[] {
  if (!errors) return []
  const record = errors as Record<string, unknown>
  const own = Array.isArray(record.__errors)
    ? record.__errors.map((message) => (prefix ? `${prefix}: ${String(message)}` : String(message)))
    : []
  const below = Object.entries(record)
    .filter(([key]) => key !== '__errors')
    .flatMap(([key, child]) => messagesOf(child as ErrorSchema, prefix ? `${prefix}.${key}` : key))
  return [...own, ...below]
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

const KIND_LABELS: Record<ValueKind, string> = { text: 'Text', number: 'Number', boolean: 'Yes/no', json: 'JSON' }

interface Row {
  id: number
  key: string
  kind: ValueKind
  text: string
}

let nextRowId = 1

/** The kind a stored value is edited as: its own when the map takes it, else JSON (which takes anything). */
function kindOf(value: unknown, kinds: ValueKind[]): ValueKind {
  const own: ValueKind =
    typeof value === 'string' ? 'text' : typeof value === 'number' ? 'number' : typeof value === 'boolean' ? 'boolean' : 'json'
  return kinds.includes(own) ? own : kinds.includes('json') ? 'json' : kinds[0]
}

function rowsOf(value: unknown, kinds: ValueKind[]): Row[] {
  if (!isRecord(value)) return []
  return Object.entries(value).map(([key, item]) => {
    const kind = kindOf(item, kinds)
    const text = kind === 'json' ? JSON.stringify(item) : String(item)
    return { id: nextRowId++, key, kind, text }
  })
}

/** A row's value, or why it has none. */
function valueOf(row: Row): { value?: unknown; error?: string } {
  const text = row.text.trim()
  if (row.kind === 'text') return { value: row.text }
  // An expression computes the value whatever its kind.
  if (text.startsWith('=')) return { value: text }
  if (row.kind === 'number')
    return text !== '' && Number.isFinite(Number(text))
      ? { value: Number(text) }
      : { error: 'Enter a number, or an expression starting with =' }
  if (row.kind === 'boolean') return text === 'true' || text === 'false' ? { value: text === 'true' } : { error: 'Choose yes or no' }
  try {
    return { value: JSON.parse(text) }
  } catch {
    return { error: 'Enter JSON (text in double quotes), or an expression starting with =' }
  }
}

/** The map the rows make (rows without a key or with a bad value left out), and each row's problem. */
function readRows(rows: Row[]): { value: Record<string, unknown> | undefined; errors: Map<number, string> } {
  const value: Record<string, unknown> = {}
  const errors = new Map<number, string>()
  for (const row of rows) {
    const key = row.key.trim()
    if (!key) {
      if (row.text.trim()) errors.set(row.id, 'Enter a key')
      continue
    }
    if (key in value) {
      errors.set(row.id, `The key ${key} is used twice`)
      continue
    }
    const read = valueOf(row)
    if (read.error !== undefined) errors.set(row.id, read.error)
    else value[key] = read.value
  }
  return { value: rows.length ? value : undefined, errors }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null)

export function KeyValueField(props: FieldProps) {
  const { formData, onChange, fieldPathId, schema, uiSchema, required, disabled, readonly, rawErrors, errorSchema, name } = props
  const options = (uiSchema?.['ui:options'] ?? {}) as { expression?: boolean; kinds?: ValueKind[] }
  const kinds: ValueKind[] = options.kinds?.length ? options.kinds : ['text']
  const title = typeof schema.title === 'string' ? schema.title : name
  const [asExpression, setAsExpression] = useState(() => Boolean(options.expression) && typeof formData === 'string')
  const [expression, setExpression] = useState(() => (typeof formData === 'string' ? formData : '='))
  const [rows, setRows] = useState<Row[]>(() => rowsOf(formData, kinds))
  const read = readRows(rows)

  // A value changed from outside (another node, a reset): show it, unless the rows already say it.
  useEffect(() => {
    if (typeof formData === 'string' && options.expression) {
      setAsExpression(true)
      setExpression(formData)
    } else if (!same(readRows(rows).value, formData) && (isRecord(formData) || formData === undefined)) {
      setAsExpression(false)
      setRows(rowsOf(formData, kinds))
    }
    // Only an outside change of the value matters here, not each keystroke in the rows.
  }, [formData])

  const emitRows = (next: Row[]) => {
    setRows(next)
    const value = readRows(next).value
    if (!same(value, formData)) onChange(value, fieldPathId.path)
  }
  const change = (id: number, patch: Partial<Row>) => emitRows(rows.map((row) => (row.id === id ? { ...row, ...patch } : row)))
  const locked = disabled || readonly

  const childErrors = (errorSchema ?? {}) as Record<string, ErrorSchema>
  const keys = new Set(rows.map((row) => row.key.trim()))
  const general = [
    ...(rawErrors ?? []),
    ...messagesOf({ __errors: (childErrors as { __errors?: string[] }).__errors } as ErrorSchema),
    ...Object.entries(childErrors)
      .filter(([key]) => key !== '__errors' && !keys.has(key))
      .flatMap(([key, child]) => messagesOf(child, key)),
  ]
  const description = [typeof schema.description === 'string' ? sentence(schema.description) : '', 'Text starting with = is an expression.']
    .filter(Boolean)
    .join(' ')

  return (
    <Input.Wrapper
      id={fieldPathId.$id}
      label={title}
      required={required}
      description={description}
      error={general.length ? general.join('; ') : undefined}
      mb="sm"
      role="group"
      aria-label={title}
    >
      <Stack gap={6} mt={6}>
        {options.expression ? (
          <Switch
            size="xs"
            label={`${title} as one expression`}
            checked={asExpression}
            disabled={locked}
            onChange={(event) => {
              const on = event.currentTarget.checked
              setAsExpression(on)
              if (on && expression.trim().startsWith('=')) onChange(expression.trim(), fieldPathId.path)
              if (!on) onChange(read.value, fieldPathId.path)
            }}
          />
        ) : null}
        {asExpression ? (
          <TextInput
            aria-label={`${title} expression`}
            value={expression}
            disabled={locked}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
            error={expression.trim().startsWith('=') ? undefined : 'An expression starts with ='}
            onChange={(event) => {
              const text = event.currentTarget.value
              setExpression(text)
              if (text.trim().startsWith('=')) onChange(text.trim(), fieldPathId.path)
            }}
          />
        ) : (
          <>
            {rows.map((row, index) => {
              const n = index + 1
              const serverErrors = messagesOf(childErrors[row.key.trim()])
              const error = [read.errors.get(row.id), ...serverErrors].filter(Boolean).join('; ')
              return (
                <div key={row.id}>
                  <Group gap={4} wrap="wrap" align="start">
                    <TextInput
                      aria-label={`${title} key ${n}`}
                      placeholder="key"
                      value={row.key}
                      disabled={locked}
                      style={{ flex: '1 1 90px', minWidth: 0 }}
                      error={Boolean(error)}
                      onChange={(event) => change(row.id, { key: event.currentTarget.value })}
                    />
                    {kinds.length > 1 ? (
                      <Select
                        aria-label={`${title} type ${n}`}
                        data={kinds.map((kind) => ({ value: kind, label: KIND_LABELS[kind] }))}
                        value={row.kind}
                        allowDeselect={false}
                        disabled={locked}
                        style={{ flex: '0 0 92px' }}
                        comboboxProps={{ withinPortal: true }}
                        onChange={(kind) =>
                          kind && change(row.id, { kind: kind as ValueKind, text: kind === 'boolean' ? 'true' : row.text })
                        }
                      />
                    ) : null}
                    {row.kind === 'boolean' && !row.text.startsWith('=') ? (
                      <Select
                        aria-label={`${title} value ${n}`}
                        data={[
                          { value: 'true', label: 'yes (true)' },
                          { value: 'false', label: 'no (false)' },
                        ]}
                        value={row.text}
                        allowDeselect={false}
                        disabled={locked}
                        style={{ flex: '2 1 120px', minWidth: 0 }}
                        comboboxProps={{ withinPortal: true }}
                        onChange={(value) => value && change(row.id, { text: value })}
                      />
                    ) : (
                      <TextInput
                        aria-label={`${title} value ${n}`}
                        placeholder={row.kind === 'text' ? 'value or =expression' : row.kind === 'number' ? '0' : 'JSON'}
                        value={row.text}
                        disabled={locked}
                        style={{ flex: '2 1 140px', minWidth: 0 }}
                        error={Boolean(error)}
                        styles={
                          row.kind === 'json' || row.text.startsWith('=')
                            ? { input: { fontFamily: 'var(--mantine-font-family-monospace)' } }
                            : undefined
                        }
                        onChange={(event) => change(row.id, { text: event.currentTarget.value })}
                      />
                    )}
                    <CloseButton
                      aria-label={`Remove row ${n} of ${title}`}
                      disabled={locked}
                      mt={4}
                      onClick={() => emitRows(rows.filter((other) => other.id !== row.id))}
                    />
                  </Group>
                  {error ? (
                    <Text size="xs" c="red" mt={2} style={{ overflowWrap: 'anywhere' }}>
                      {error}
                    </Text>
                  ) : null}
                </div>
              )
            })}
            <Group>
              <Button
                size="xs"
                variant="light"
                disabled={locked}
                aria-label={`Add a row to ${title}`}
                onClick={() => setRows([...rows, { id: nextRowId++, key: '', kind: kinds[0], text: '' }])}
              >
                Add {rows.length ? 'another' : 'a'} row
              </Button>
            </Group>
          </>
        )}
      </Stack>
    </Input.Wrapper>
  )
}

/** An account's, agent's or prompt's uuid, picked by name among the workspace's. */
export function ResourceField(props: FieldProps) {
  const { formData, onChange, fieldPathId, schema, uiSchema, required, disabled, readonly, rawErrors, errorSchema, name } = props
  const options = (uiSchema?.['ui:options'] ?? {}) as { resource?: Resource; provider?: string }
  const resource = options.resource ?? 'accounts'
  const accounts = useAccountChoices(resource === 'accounts')
  const agents = useAgentChoices(resource === 'agents')
  const prompts = usePromptChoices(resource === 'prompts')
  const query = resource === 'accounts' ? accounts : resource === 'agents' ? agents : prompts
  const choices: { value: string; label: string }[] =
    resource === 'accounts'
      ? (accounts.data?.data ?? [])
          .filter(
            (account) => !options.provider || account.provider.slug === options.provider || account.provider.uuid === options.provider,
          )
          .map((account) => ({ value: account.uuid, label: `${account.name} (${account.provider.name})` }))
      : ((resource === 'agents' ? agents.data?.data : prompts.data?.data) ?? []).map((item) => ({ value: item.uuid, label: item.name }))
  const value = typeof formData === 'string' && formData ? formData : null
  // A stored uuid the list does not hold (deleted, or beyond the first 100) stays shown, as itself.
  const data = value && !choices.some((choice) => choice.value === value) ? [...choices, { value, label: `Unknown (${value})` }] : choices
  const noun = resource === 'accounts' ? 'account' : resource === 'agents' ? 'agent' : 'prompt'
  const title = typeof schema.title === 'string' ? schema.title.replace(/ UUID$/, '') : name
  const messages = [
    ...(rawErrors ?? []),
    ...messagesOf(errorSchema),
    ...(query.error ? [`The ${noun}s could not be read: ${query.error.message}`] : []),
  ]
  return (
    <Select
      id={fieldPathId.$id}
      label={title}
      description={typeof schema.description === 'string' ? sentence(schema.description) : undefined}
      required={required}
      disabled={disabled || readonly}
      searchable
      clearable
      data={data}
      value={value}
      placeholder={
        query.isPending ? `Loading ${noun}s…` : choices.length ? `Pick ${noun === 'prompt' ? 'a' : 'an'} ${noun}` : `No ${noun} yet`
      }
      nothingFoundMessage={`No ${noun} by that name`}
      error={messages.length ? messages.join('; ') : undefined}
      comboboxProps={{ withinPortal: true }}
      mb="sm"
      onChange={(next) => onChange(next ?? undefined, fieldPathId.path)}
    />
  )
}
