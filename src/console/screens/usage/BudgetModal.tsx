/**
 * The budget dialog of the usage screen: a new budget (`budgets.create`, `POST /api/v1/budgets`)
 * or a budget changed (`budgets.update`, `PUT /api/v1/budgets/{budget_uuid}`), with every field
 * of docs/api/usage-and-budgets.md: name, what it covers (the workspace, an agent, a member or an
 * access token), period, limits in dollars and tokens, block or notify, alert thresholds, active.
 * The form checks nothing itself: the service's 400 shows each issue at the field it names (at
 * least one limit: at the cost limit), the rest in one alert.
 */
import { Button, Group, Modal, NumberInput, Select, SimpleGrid, Stack, Switch, TagsInput, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf, type RouterInputs } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreateBudget, useUpdateBudget, type Budget } from './api.ts'

type Scope = Budget['scope']
type BudgetFields = Omit<RouterInputs['budgets']['create'], 'workspace_uuid'>

/** The choices a target picker offers. */
export interface TargetChoices {
  agents: { value: string; label: string }[]
  users: { value: string; label: string }[]
  tokens: { value: string; label: string }[]
}

const SCOPES: { value: Scope; label: string }[] = [
  { value: 'workspace', label: 'The whole workspace' },
  { value: 'agent', label: 'One agent' },
  { value: 'user', label: 'One member' },
  { value: 'access_token', label: 'One access token' },
]
const PERIODS = [
  { value: 'day', label: 'Each day (UTC)' },
  { value: 'week', label: 'Each week (from Monday)' },
  { value: 'month', label: 'Each month' },
  { value: 'total', label: 'In total' },
]
const ACTIONS = [
  { value: 'block', label: 'Block model calls once reached' },
  { value: 'notify', label: 'Only alert' },
]

/** The field each scope's target is sent as. */
const TARGET_FIELD = { workspace: null, agent: 'agent_uuid', user: 'user_id', access_token: 'access_token_uuid' } as const

/** Every field the form shows an issue at. */
const FIELDS = [
  'name',
  'scope',
  'agent_uuid',
  'user_id',
  'access_token_uuid',
  'period',
  'limit_cost',
  'limit_tokens',
  'action',
  'alert_thresholds',
  'is_active',
]

interface Form {
  name: string
  scope: Scope
  target: string | null
  period: Budget['period']
  limitCost: string | number
  limitTokens: string | number
  action: Budget['action']
  thresholds: string[]
  isActive: boolean
}

const EMPTY: Form = {
  name: '',
  scope: 'workspace',
  target: null,
  period: 'month',
  limitCost: '',
  limitTokens: '',
  action: 'block',
  thresholds: ['80', '100'],
  isActive: true,
}

function formOf(budget: Budget | null): Form {
  if (!budget) return EMPTY
  const target = budget.agent_uuid ?? (budget.user_id === null ? null : String(budget.user_id)) ?? budget.access_token_uuid
  return {
    name: budget.name,
    scope: budget.scope,
    target,
    period: budget.period,
    limitCost: budget.limit_cost ?? '',
    limitTokens: budget.limit_tokens ?? '',
    action: budget.action,
    thresholds: budget.alert_thresholds.map(String),
    isActive: budget.is_active,
  }
}

/** The request: every field, the targets the scope does not use as null (the service refuses them set). */
function toFields(form: Form): BudgetFields {
  const target = (field: (typeof TARGET_FIELD)[Scope]) => (TARGET_FIELD[form.scope] === field ? form.target : null)
  const userId = target('user_id')
  return {
    name: form.name,
    scope: form.scope,
    agent_uuid: target('agent_uuid'),
    user_id: userId === null ? null : Number(userId),
    access_token_uuid: target('access_token_uuid'),
    period: form.period,
    limit_cost: form.limitCost === '' ? null : Number(form.limitCost),
    limit_tokens: form.limitTokens === '' ? null : Number(form.limitTokens),
    action: form.action,
    alert_thresholds: form.thresholds.map(Number),
    is_active: form.isActive,
  }
}

/** `budget` null with `opened`: a new budget. */
export function BudgetModal({
  opened,
  budget,
  choices,
  onClose,
}: {
  opened: boolean
  budget: Budget | null
  choices: TargetChoices
  onClose: () => void
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={budget ? `Change the budget “${budget.name}”` : 'New budget'} size="lg">
      {opened ? <BudgetForm key={budget?.uuid ?? 'new'} budget={budget} choices={choices} onDone={onClose} /> : null}
    </Modal>
  )
}

function BudgetForm({ budget, choices, onDone }: { budget: Budget | null; choices: TargetChoices; onDone: () => void }) {
  const [form, setForm] = useState(() => formOf(budget))
  const set = (next: Partial<Form>) => setForm((current) => ({ ...current, ...next }))
  const create = useCreateBudget({ onSuccess: onDone })
  const update = useUpdateBudget({ onSuccess: onDone })
  const mutation = budget ? update : create
  const problem = mutation.error ? problemOf(mutation.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (budget) update.mutate({ budget_uuid: budget.uuid, ...toFields(form) })
    else create.mutate(toFields(form))
  }
  const targetField = TARGET_FIELD[form.scope]
  const targetData = form.scope === 'agent' ? choices.agents : form.scope === 'user' ? choices.users : choices.tokens
  const targetLabel = form.scope === 'agent' ? 'Agent' : form.scope === 'user' ? 'Member' : 'Access token'
  return (
    <form onSubmit={submit} noValidate aria-label={budget ? 'Change the budget' : 'New budget'}>
      <Stack>
        <TextInput
          label="Name"
          required
          value={form.name}
          onChange={(event) => set({ name: event.currentTarget.value })}
          error={fieldError(problem, 'name')}
        />
        <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="sm">
          <Select
            label="Covers"
            data={SCOPES}
            value={form.scope}
            onChange={(value) => value && set({ scope: value as Scope, target: null })}
            allowDeselect={false}
            error={fieldError(problem, 'scope')}
            comboboxProps={{ withinPortal: true }}
          />
          {targetField ? (
            <Select
              label={targetLabel}
              description={form.scope === 'access_token' ? 'Your tokens' : undefined}
              placeholder="Pick one"
              data={targetData}
              value={form.target}
              onChange={(value) => set({ target: value })}
              searchable
              error={fieldError(problem, targetField)}
              comboboxProps={{ withinPortal: true }}
            />
          ) : null}
          <Select
            label="Period"
            data={PERIODS}
            value={form.period}
            onChange={(value) => value && set({ period: value as Budget['period'] })}
            allowDeselect={false}
            error={fieldError(problem, 'period')}
            comboboxProps={{ withinPortal: true }}
          />
          <Select
            label="When reached"
            data={ACTIONS}
            value={form.action}
            onChange={(value) => value && set({ action: value as Budget['action'] })}
            allowDeselect={false}
            error={fieldError(problem, 'action')}
            comboboxProps={{ withinPortal: true }}
          />
          <NumberInput
            label="Cost limit (USD)"
            description="Leave empty for none; at least one limit"
            min={0}
            decimalScale={6}
            value={form.limitCost}
            onChange={(value) => set({ limitCost: value })}
            error={fieldError(problem, 'limit_cost')}
          />
          <NumberInput
            label="Token limit"
            description="Leave empty for none"
            min={0}
            allowDecimal={false}
            thousandSeparator=","
            value={form.limitTokens}
            onChange={(value) => set({ limitTokens: value })}
            error={fieldError(problem, 'limit_tokens')}
          />
        </SimpleGrid>
        <TagsInput
          label="Alert at (% of a limit)"
          description="Up to five percentages; each raises budget.threshold_reached once a period"
          value={form.thresholds}
          onChange={(value) => set({ thresholds: value })}
          error={fieldError(problem, 'alert_thresholds')}
        />
        <Switch label="Active" checked={form.isActive} onChange={(event) => set({ isActive: event.currentTarget.checked })} />
        <FormProblem problem={problem} fields={FIELDS} />
        <Group justify="end">
          <Button variant="default" onClick={onDone}>
            Cancel
          </Button>
          <Button type="submit" loading={mutation.isPending}>
            {budget ? 'Save budget' : 'Create budget'}
          </Button>
        </Group>
      </Stack>
    </form>
  )
}
