/**
 * The command room's model (docs/api/command-room.md): a task's schedule in words, times in the
 * task's own time zone, and the form's draft turned into the store or update body.
 *
 * The form takes `run_at` as a wall-clock time in the task's time zone (what "daily at 09:00
 * Europe/Paris" means) and sends it as an instant; the browser's Intl data does the conversion,
 * so no time zone library is needed.
 */
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'

export type Task = RouterOutputs['commandRoom']['list']['data'][number]
export type Firing = RouterOutputs['commandRoom']['firings']['data'][number]
export type StoreInput = RouterInputs['commandRoom']['store']
export type UpdateInput = RouterInputs['commandRoom']['update']

export const SCHEDULE_KINDS = [
  { value: 'once', label: 'Once' },
  { value: 'hourly', label: 'Hourly' },
  { value: 'daily', label: 'Daily' },
  { value: 'weekly', label: 'Weekly' },
  { value: 'cron', label: 'Cron expression' },
] as const
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number]['value']

/** `schedule` as the kind of the form and, for cron, its expression. */
export function scheduleKind(schedule: string): { kind: ScheduleKind; cron: string } {
  const named = SCHEDULE_KINDS.find((k) => k.value === schedule && k.value !== 'cron')
  return named ? { kind: named.value, cron: '' } : { kind: 'cron', cron: schedule }
}

/** Every IANA zone the browser knows, UTC included (some browsers list it apart). */
export function timeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : []
  return zones.includes('UTC') ? zones : ['UTC', ...zones]
}

/** The browser's own zone, the form's default. */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'

const wallClockFormats = new Map<string, Intl.DateTimeFormat>()

/** The wall-clock fields of `instant` in `zone`. */
function wallClock(instant: Date, zone: string) {
  let format = wallClockFormats.get(zone)
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
    })
    wallClockFormats.set(zone, format)
  }
  const parts: Record<string, string> = {}
  for (const part of format.formatToParts(instant)) parts[part.type] = part.value
  return parts
}

/** `instant` in `zone` as `YYYY-MM-DD HH:mm:ss` (the date input's value). */
export function toWallClock(instant: string | Date, zone: string): string {
  const p = wallClock(new Date(instant), zone)
  return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}`
}

/** Milliseconds `zone` is ahead of UTC at `instant`. */
function offsetAt(instant: number, zone: string): number {
  const p = wallClock(new Date(instant), zone)
  const asUtc = Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day), Number(p.hour), Number(p.minute), Number(p.second))
  return asUtc - Math.floor(instant / 1000) * 1000
}

/**
 * The instant of the wall-clock time `value` (`YYYY-MM-DD HH:mm[:ss]`) in `zone`, as ISO 8601, or
 * null when it is not such a time. Two passes settle the offset around a daylight-saving change.
 */
export function fromWallClock(value: string, zone: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim())
  if (!match) return null
  const [, y, mo, d, h, mi, s] = match.map(Number) as number[]
  const asUtc = Date.UTC(y!, mo! - 1, d!, h!, mi!, s ?? 0)
  if (Number.isNaN(asUtc)) return null
  try {
    let instant = asUtc - offsetAt(asUtc, zone)
    instant = asUtc - offsetAt(instant, zone)
    return new Date(instant).toISOString()
  } catch {
    // An unknown zone: the service names `timezone` in its answer.
    return new Date(asUtc).toISOString()
  }
}

/** `instant` for people, in `zone`, with the zone's short name ("Mar 27, 2026, 9:00 AM CET"). */
export function formatIn(instant: string | null, zone: string): string {
  if (!instant) return '—'
  try {
    // Not dateStyle/timeStyle: Intl refuses them together with timeZoneName.
    return new Intl.DateTimeFormat(undefined, {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZone: zone,
      timeZoneName: 'short',
    }).format(new Date(instant))
  } catch {
    return new Date(instant).toLocaleString()
  }
}

/** The task's schedule in words, read in its zone: "Daily at 09:00", "Cron 0 9 * * 1-5". */
export function describeSchedule(task: Pick<Task, 'schedule' | 'run_at' | 'timezone'>): string {
  const { kind, cron } = scheduleKind(task.schedule)
  if (kind === 'cron') return `Cron ${cron}`
  let p: Record<string, string>
  try {
    p = wallClock(new Date(task.run_at), task.timezone)
  } catch {
    return kind
  }
  switch (kind) {
    case 'once':
      return `Once, ${formatIn(task.run_at, task.timezone)}`
    case 'hourly':
      return `Hourly at minute ${p.minute}`
    case 'daily':
      return `Daily at ${p.hour}:${p.minute}`
    case 'weekly':
      return `Weekly on ${p.weekday} at ${p.hour}:${p.minute}`
  }
}

/** What the form edits. */
export interface TaskDraft {
  name: string
  targetKind: 'agent' | 'workflow'
  agentUuid: string | null
  workflowUuid: string | null
  /** An agent's input: the user message. */
  message: string
  /** A workflow's input: a JSON object, as text. */
  json: string
  kind: ScheduleKind
  cron: string
  /** Wall-clock `YYYY-MM-DD HH:mm:ss` in `timezone`, or null (the service's default for repeating schedules). */
  runAt: string | null
  timezone: string
  isActive: boolean
}

export function emptyDraft(): TaskDraft {
  return {
    name: '',
    targetKind: 'agent',
    agentUuid: null,
    workflowUuid: null,
    message: '',
    json: '{}',
    kind: 'daily',
    cron: '',
    runAt: null,
    timezone: browserZone(),
    isActive: true,
  }
}

export function draftOf(task: Task): TaskDraft {
  const { kind, cron } = scheduleKind(task.schedule)
  return {
    name: task.name,
    targetKind: task.workflow ? 'workflow' : 'agent',
    agentUuid: task.agent?.uuid ?? null,
    workflowUuid: task.workflow?.uuid ?? null,
    message: typeof task.input === 'string' ? task.input : '',
    json: typeof task.input === 'string' ? '{}' : JSON.stringify(task.input, null, 2),
    kind,
    cron,
    runAt: toWallClock(task.run_at, task.timezone),
    timezone: task.timezone,
    isActive: task.is_active,
  }
}

/** A problem the form finds itself, by field, before sending (the JSON input only). */
export type LocalIssues = Record<string, string>

/** The draft's `input`, or an issue at `input` when a workflow's JSON is not an object. */
function inputOf(draft: TaskDraft): { input?: string | Record<string, unknown>; issue?: string } {
  if (draft.targetKind === 'agent') return { input: draft.message }
  let parsed: unknown
  try {
    parsed = JSON.parse(draft.json || '{}')
  } catch {
    return { issue: 'Not valid JSON' }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { issue: 'A workflow takes a JSON object' }
  return { input: parsed as Record<string, unknown> }
}

/** The store body of a draft, or the issues that keep it from being sent. */
export function storeBody(draft: TaskDraft): { body?: StoreInput; issues: LocalIssues } {
  const { input, issue } = inputOf(draft)
  if (issue) return { issues: { input: issue } }
  const runAt = draft.runAt ? fromWallClock(draft.runAt, draft.timezone) : null
  return {
    issues: {},
    body: {
      name: draft.name,
      ...(draft.targetKind === 'agent' ? (draft.agentUuid ? { agent_uuid: draft.agentUuid } : {}) : draft.workflowUuid ? { workflow_uuid: draft.workflowUuid } : {}),
      input,
      schedule: draft.kind === 'cron' ? draft.cron : draft.kind,
      timezone: draft.timezone,
      ...(runAt ? { run_at: runAt } : {}),
      is_active: draft.isActive,
    },
  }
}

/**
 * The update body: only what changed, since an omitted field keeps its value, and resending an
 * unchanged past `run_at` of a `once` task would be refused (docs/api/command-room.md, "Errors").
 */
export function updateBody(task: Task, draft: TaskDraft): { body?: UpdateInput; issues: LocalIssues } {
  const { input, issue } = inputOf(draft)
  if (issue) return { issues: { input: issue } }
  const before = draftOf(task)
  const schedule = draft.kind === 'cron' ? draft.cron : draft.kind
  const runAt = draft.runAt ? fromWallClock(draft.runAt, draft.timezone) : null
  const targetChanged = draft.targetKind !== before.targetKind || (draft.targetKind === 'agent' ? draft.agentUuid !== before.agentUuid : draft.workflowUuid !== before.workflowUuid)
  const inputChanged = draft.targetKind === 'agent' ? draft.message !== before.message : JSON.stringify(input) !== JSON.stringify(task.input)
  const body: UpdateInput = { task_uuid: task.uuid }
  if (draft.name !== task.name) body.name = draft.name
  if (targetChanged) {
    if (draft.targetKind === 'agent') body.agent_uuid = draft.agentUuid ?? undefined
    else body.workflow_uuid = draft.workflowUuid ?? undefined
  }
  if (inputChanged || draft.targetKind !== before.targetKind) body.input = input
  if (schedule !== task.schedule) body.schedule = schedule
  if (draft.timezone !== task.timezone) body.timezone = draft.timezone
  if (runAt && new Date(runAt).getTime() !== new Date(task.run_at).getTime()) body.run_at = runAt
  if (draft.isActive !== task.is_active) body.is_active = draft.isActive
  return { body, issues: {} }
}
