/**
 * What the webhooks screens share: the endpoint and delivery shapes the service answers, the
 * event types an endpoint can subscribe to (checked against the router's input type, so a type
 * the service adds fails `tsc` here until it is listed), and how a delivery reads for a person.
 */
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'

export type Endpoint = RouterOutputs['webhooks']['list']['data'][number]
export type Delivery = RouterOutputs['webhooks']['deliveries']['data'][number]
export type DeliveryStatus = Delivery['status']
export type Attempt = Delivery['attempts'][number]

/** What `event_types` holds: event types, or `*` for every one of them. */
export type EventChoice = RouterInputs['webhooks']['create']['event_types'][number]
export type EventType = Exclude<EventChoice, '*'>

/** `event_types: ['*']`: every event type, those the service adds later too. */
export const ALL_EVENTS = '*'

/** The event types, in the order the service lists them. */
export const EVENT_TYPES = [
  'run.succeeded',
  'run.failed',
  'run.canceled',
  'run.approval_requested',
  'workflow_execution.succeeded',
  'workflow_execution.failed',
  'knowledge_document.ready',
  'knowledge_document.failed',
  'command_room_firing.succeeded',
  'command_room_firing.failed',
  'budget.threshold_reached',
  'agent.version_created',
  'evaluation.succeeded',
  'evaluation.failed',
  'webhook_endpoint.ping',
] as const satisfies readonly EventType[]

type Assert<T extends true> = T
/** Fails to compile while the service knows an event type {@link EVENT_TYPES} does not list. */
export type EveryEventTypeListed = Assert<[Exclude<EventType, (typeof EVENT_TYPES)[number]>] extends [never] ? true : false>

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const satisfies readonly DeliveryStatus[]

export const STATUS_COLORS: Record<DeliveryStatus, string> = { pending: 'yellow', succeeded: 'green', failed: 'red' }

/** An endpoint's event types for a person: "All events", or the types. */
export const describeEventTypes = (types: readonly EventChoice[]): string[] => (types.includes(ALL_EVENTS) ? ['All events'] : [...types])

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' })

/** A timestamp in the browser's zone, to the second; a dash when there is none. */
export const formatTime = (iso: string | null | undefined) => (iso ? dateTimeFormat.format(new Date(iso)) : '–')

/** How an attempt ended, in a few words: `HTTP 200`, or the error when nothing was answered. */
export function describeAttempt(attempt: Attempt): string {
  if (attempt.status_code !== null) return `HTTP ${attempt.status_code}`
  return attempt.error ?? 'No answer'
}

/** Whether the receiver answered a 2xx: the attempt delivered the event. */
export const answeredOk = (attempt: Attempt) => attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300

/** The delivery's newest attempt, if any. */
export const lastAttempt = (delivery: Delivery): Attempt | undefined => delivery.attempts.at(-1)
