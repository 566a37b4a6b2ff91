/**
 * The dialog that decides a pending tool call: "Approve" (`approvals.approve`) with the arguments
 * as editable JSON, prefilled with the model's (sent only when edited; the service checks them
 * against the tool's input schema and answers a 400 naming `arguments.<field>`, shown at the
 * field) and an optional reason; "Deny" (`approvals.deny`) with an optional reason, which the
 * model reads. A 409 (decided by someone else first, or expired) is said in the dialog; the hook
 * has marked the lists stale, and the caller learns what became of the approval.
 */
import { Alert, Button, Group, JsonInput, Modal, Stack, Text, Textarea } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useApprove, useDeny, type Approval } from './api.ts'

export type DecisionKind = 'approve' | 'deny'

/** What the dialog is asked to decide. */
export interface Decision {
  approval: Approval
  kind: DecisionKind
}

interface Props {
  decision: Decision | null
  onClose: () => void
  /** Called with the approval the service answered. */
  onDecided: (approval: Approval) => void
  /** Called with the approval's uuid when the service answered 409. */
  onConflict: (approvalUuid: string) => void
}

export function DecisionModal({ decision: target, onClose, onDecided, onConflict }: Props) {
  // Kept while the dialog closes, so its text does not empty before it is gone.
  const [decision, setShown] = useState(target)
  if (target && target !== decision) setShown(target)
  const title = decision ? `${decision.kind === 'approve' ? 'Approve' : 'Deny'} ${decision.approval.tool_name}?` : ''
  return (
    <Modal opened={target !== null} onClose={onClose} title={title} size="lg">
      {decision ? (
        <DecisionForm
          key={`${decision.kind}:${decision.approval.uuid}`}
          decision={decision}
          onClose={onClose}
          onDecided={onDecided}
          onConflict={onConflict}
        />
      ) : null}
    </Modal>
  )
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The arguments as typed, read back: an object, or why not. */
function readArguments(text: string): { value: Record<string, unknown> } | { error: string } {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return { error: 'Not valid JSON' }
  }
  return isObject(value) ? { value } : { error: 'The arguments must be a JSON object' }
}

function DecisionForm({ decision, onClose, onDecided, onConflict }: Props & { decision: Decision }) {
  const { approval, kind } = decision
  const original = JSON.stringify(approval.arguments, null, 2)
  const [json, setJson] = useState(original)
  const [reason, setReason] = useState('')
  const [localError, setLocalError] = useState<string | null>(null)
  const handlers = {
    onSuccess: (answer: { data: Approval }) => {
      onDecided(answer.data)
      onClose()
    },
    onError: (error: unknown) => {
      if (problemOf(error).status === 409) onConflict(approval.uuid)
    },
  }
  const approve = useApprove(handlers)
  const deny = useDeny(handlers)
  const mutation = kind === 'approve' ? approve : deny
  const problem = mutation.error ? problemOf(mutation.error) : null
  const conflict = problem?.status === 409

  const submit = (event: FormEvent) => {
    event.preventDefault()
    const common = { approval_uuid: approval.uuid, ...(reason.trim() ? { reason: reason.trim() } : {}) }
    if (kind === 'deny') {
      deny.mutate(common)
      return
    }
    const read = readArguments(json)
    setLocalError('error' in read ? read.error : null)
    if ('error' in read) return
    // The model's arguments unless they were edited.
    const edited = JSON.stringify(read.value) !== JSON.stringify(approval.arguments)
    approve.mutate({ ...common, ...(edited ? { arguments: read.value } : {}) })
  }

  return (
    <form onSubmit={submit} noValidate>
      <Stack>
        {conflict ? (
          <Alert color="yellow" title="Already decided" role="alert">
            <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
              {problem.message}. The list shows what became of it.
            </Text>
          </Alert>
        ) : (
          <FormProblem problem={problem} fields={['arguments', 'reason']} />
        )}
        {kind === 'approve' ? (
          <JsonInput
            label="Arguments"
            description="What the tool is called with. Edit them to change the call; they are checked against the tool's input schema."
            autosize
            minRows={3}
            maxRows={14}
            formatOnBlur
            value={json}
            onChange={(value) => {
              setJson(value)
              setLocalError(null)
            }}
            error={localError ?? fieldError(problem, 'arguments')}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
        ) : (
          <Text size="sm">The call does not run. The model is told it was denied, with your reason, and goes on without it.</Text>
        )}
        <Textarea
          label="Reason"
          description={kind === 'deny' ? 'Optional; the model reads it' : 'Optional; kept with the decision'}
          autosize
          minRows={2}
          maxLength={2000}
          value={reason}
          onChange={(event) => setReason(event.currentTarget.value)}
          error={fieldError(problem, 'reason')}
        />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {conflict ? 'Close' : 'Cancel'}
          </Button>
          <Button type="submit" color={kind === 'approve' ? 'green' : 'red'} loading={mutation.isPending} disabled={conflict}>
            {kind === 'approve' ? 'Approve' : 'Deny'}
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
