/**
 * The part of a failed form submission that no field shows (docs/console.md, "Errors"): a 400's
 * issues at fields the form does not have, or any other failure in words (a 401 of sign-in: the
 * service's own message).
 */
import { Alert, Text } from '@mantine/core'
import type { Problem } from '../lib/api.ts'
import { otherIssues } from './forms.ts'
import { describeStatus } from './states.tsx'

export function FormProblem({ problem, fields }: { problem: Problem | null; fields: string[] }) {
  if (!problem) return null
  const others = otherIssues(problem, fields)
  if (problem.status === 400 && Object.keys(problem.fields).length > 0 && others.length === 0) return null
  const { title, detail } = describeStatus(problem)
  return (
    <Alert color="red" title={problem.status === 400 ? 'Check the form' : title} role="alert">
      <Text size="sm" style={{ overflowWrap: 'anywhere' }}>
        {others.length ? others.join('; ') : problem.status === 401 ? problem.message : detail}
      </Text>
    </Alert>
  )
}
