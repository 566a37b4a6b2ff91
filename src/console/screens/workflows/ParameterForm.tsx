/**
 * A node's parameters as a form built from its type's JSON Schema (rjsf with its Mantine theme;
 * the schema made drawable by ./formSchema.ts, checked as one types by ./schemaValidator.ts, which
 * compiles nothing and so runs under the console's CSP): maps as key/value rows and accounts,
 * agents and prompts picked by name (./ParameterFields.tsx), values of any JSON as JSON text.
 * The last save's issues of the node are shown at their fields (`extraErrors`), as the service said them.
 */
import { Textarea } from '@mantine/core'
import Form from '@rjsf/mantine'
import type { ErrorSchema, FieldProps, RegistryFieldsType, RJSFSchema } from '@rjsf/utils'
import { useEffect, useMemo, useState } from 'react'
import { JSON_FIELD, KEY_VALUE_FIELD, parameterForm, RESOURCE_FIELD, sentence } from './formSchema.ts'
import { KeyValueField, messagesOf, ResourceField } from './ParameterFields.tsx'
import { schemaValidator } from './schemaValidator.ts'

type Parameters = Record<string, unknown>

/** The text a JSON field shows for a value: an expression as typed, anything else as JSON. */
function textOf(value: unknown): string {
  if (value === undefined) return ''
  if (typeof value === 'string' && value.startsWith('=')) return value
  return JSON.stringify(value, null, 2)
}

/** What a JSON field's text means: nothing, a JSON value, or an `=expression`; else why not. */
function readText(text: string, expression: boolean): { value?: unknown; error?: string } {
  const trimmed = text.trim()
  if (!trimmed) return { value: undefined }
  if (expression && trimmed.startsWith('=')) return { value: trimmed }
  try {
    return { value: JSON.parse(trimmed) }
  } catch {
    return { error: expression ? 'Enter JSON (text in double quotes) or an expression starting with =' : 'Enter JSON (text in double quotes)' }
  }
}

/** A field of any JSON value (or an expression where the schema takes one), edited as text. */
function JsonField(props: FieldProps) {
  const { formData, onChange, fieldPathId, schema, uiSchema, required, disabled, readonly, rawErrors, errorSchema, name } = props
  const expression = Boolean((uiSchema?.['ui:options'] as { expression?: boolean } | undefined)?.expression)
  const [text, setText] = useState(() => textOf(formData))
  const [parseError, setParseError] = useState<string>()
  // A value changed from outside (another node chosen, a reset): show it, unless the text already says it.
  useEffect(() => {
    const current = readText(text, expression)
    if (current.error === undefined && JSON.stringify(current.value) !== JSON.stringify(formData)) {
      setText(textOf(formData))
      setParseError(undefined)
    }
    // Only an outside change of the value matters here, not each keystroke of the text.
  }, [formData])
  const messages = [...(parseError ? [parseError] : []), ...(rawErrors ?? []), ...messagesOf(errorSchema)]
  const title = typeof schema.title === 'string' ? schema.title : name
  return (
    <Textarea
      id={fieldPathId.$id}
      label={title}
      description={[schema.description && sentence(schema.description), expression ? 'JSON, or an expression starting with =.' : 'JSON.'].filter(Boolean).join(' ')}
      required={required}
      disabled={disabled || readonly}
      autosize
      minRows={2}
      maxRows={10}
      value={text}
      error={messages.length ? messages.join('; ') : undefined}
      styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
      onChange={(event) => {
        const next = event.currentTarget.value
        setText(next)
        const read = readText(next, expression)
        setParseError(read.error)
        if (read.error === undefined) onChange(read.value, fieldPathId.path)
      }}
    />
  )
}

const FIELDS: RegistryFieldsType = { [JSON_FIELD]: JsonField, [KEY_VALUE_FIELD]: KeyValueField, [RESOURCE_FIELD]: ResourceField }

export function ParameterForm({
  nodeKey,
  parametersSchema,
  parameters,
  onChange,
  serverErrors,
}: {
  /** Ids of the form's fields start with it (one form per node). */
  nodeKey: string
  parametersSchema: Record<string, unknown>
  parameters: Parameters
  onChange: (parameters: Parameters) => void
  /** The last save's issues below `parameters`, by dotted path (`url`, `values.broken`). */
  serverErrors: Record<string, string>
}) {
  const { schema, uiSchema } = useMemo(() => parameterForm(parametersSchema), [parametersSchema])
  const extraErrors = useMemo(() => {
    const tree: Record<string, unknown> = {}
    for (const [path, message] of Object.entries(serverErrors)) {
      let at = tree
      for (const key of path ? path.split('.') : []) at = (at[key] ??= {}) as Record<string, unknown>
      const list = ((at.__errors as string[] | undefined) ??= [])
      list.push(message)
    }
    return tree as ErrorSchema
  }, [serverErrors])
  const empty = !schema.properties || Object.keys(schema.properties).length === 0
  if (empty) return null
  return (
    <Form
      schema={schema as RJSFSchema}
      uiSchema={uiSchema}
      formData={parameters}
      validator={schemaValidator}
      fields={FIELDS}
      idPrefix={nodeKey}
      liveValidate="onChange"
      showErrorList={false}
      extraErrors={extraErrors}
      onChange={(event) => onChange((event.formData ?? {}) as Parameters)}
      onSubmit={() => {}}
    />
  )
}
