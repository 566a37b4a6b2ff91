/**
 * Loading, empty and error states shared by the screens (docs/console.md, "Errors"): a 403 or a
 * 404 says what happened in words, never a blank screen; a 400's issues belong at their fields
 * (./forms.ts), the rest of a failure in an alert with the request id to quote.
 */
import { Alert, Button, Center, Container, Loader, Stack, Text, Title } from '@mantine/core'
import type { ReactNode } from 'react'
import { isRouteErrorResponse, Link, useRouteError } from 'react-router'
import { problemOf, type Problem } from '../lib/api.ts'

export function Loading({ label = 'Loading' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Loader size="sm" mr="sm" />
      <Text c="dimmed">{label}…</Text>
    </Center>
  )
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Stack align="center" py="xl" gap="xs">
      <Text fw={600}>{title}</Text>
      {children ? (
        <Text c="dimmed" ta="center">
          {children}
        </Text>
      ) : null}
    </Stack>
  )
}

/** The words for a failed call, by status. */
export function describeProblem(error: unknown): { title: string; detail: string } {
  return describeStatus(problemOf(error))
}

/** When to try again, from the seconds the service asked to wait: "Try again in 30 seconds (after 14:05:12)." */
export function whenToRetry(seconds: number): string {
  const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString()
  if (seconds < 90) return `Try again in ${seconds} second${seconds === 1 ? '' : 's'} (after ${at}).`
  const minutes = Math.ceil(seconds / 60)
  return minutes < 90
    ? `Try again in ${minutes} minutes (after ${at}).`
    : `Try again after ${new Date(Date.now() + seconds * 1000).toLocaleString()}.`
}

/**
 * The service's own words for a failure: a 400's message is only "Input validation failed", and
 * what to do is in its issues (a model without a credential, a field too short), so those are said.
 */
export function problemWords(problem: Problem): string {
  if (problem.issues.length === 0) return problem.message
  return [...new Set(problem.issues.map((issue) => issue.message))].join('; ')
}

/** A message as a sentence, so that words can follow it. */
const sentence = (text: string) => (/[.!?:)]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`)

/** The words for a {@link Problem}, by status. */
export function describeStatus(problem: Problem): { title: string; detail: string } {
  const retry = problem.retryAfter != null ? ` ${whenToRetry(problem.retryAfter)}` : ''
  switch (problem.status) {
    case 0:
      return { title: 'The service could not be reached', detail: 'Check that it is running; the console retries on its own.' }
    case 403:
      return { title: 'Not allowed', detail: `You do not have permission for this. ${problem.message}` }
    case 404:
      return { title: 'Not found', detail: 'It does not exist, was deleted, or is not shared with you in this workspace.' }
    case 429:
      return {
        title: 'Too many requests',
        // No Retry-After: a budget over its whole lifetime (`total`), where waiting does not help.
        detail: `${sentence(problem.message)}${retry || ' The service named no time to try again: waiting will not lift this limit.'}`,
      }
    default:
      return {
        title: problem.status >= 500 ? 'The service failed' : 'The request was refused',
        detail: retry ? `${sentence(problemWords(problem))}${retry}` : problemWords(problem),
      }
  }
}

/** A failed call as an alert (role="alert"), with a retry button when given one. */
export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { title, detail } = describeProblem(error)
  return (
    <Alert color="red" title={title} role="alert" my="sm">
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {detail}
      </Text>
      {onRetry ? (
        <Button size="xs" variant="light" mt="xs" onClick={onRetry}>
          Try again
        </Button>
      ) : null}
    </Alert>
  )
}

/** What a route shows when it failed to load or matched nothing. */
export function RouteError({ notFound = false }: { notFound?: boolean }) {
  const error = useRouteError()
  const missing = notFound || (isRouteErrorResponse(error) && error.status === 404)
  return (
    <Container size="sm" py="xl">
      <Title order={2}>{missing ? 'Page not found' : 'Something went wrong'}</Title>
      <Text my="md">
        {missing ? 'There is no screen at this address.' : error instanceof Error ? error.message : 'The screen failed to load.'}
      </Text>
      <Button component={Link} to="/agents">
        Back to agents
      </Button>
    </Container>
  )
}
