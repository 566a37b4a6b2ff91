/** Small pieces of the evaluations screens: a status as a coloured badge, a pass or a fail. */
import { Badge } from '@mantine/core'

const COLORS: Record<string, string> = {
  queued: 'gray',
  pending: 'gray',
  running: 'blue',
  succeeded: 'green',
  failed: 'red',
  canceled: 'orange',
}

export function StatusBadge({ status }: { status: string }) {
  return (
    <Badge color={COLORS[status] ?? 'gray'} variant="light">
      {status}
    </Badge>
  )
}

/** `passed` as a word (null: not scored). */
export const passWord = (passed: boolean | null | undefined) => (passed == null ? 'not scored' : passed ? 'pass' : 'fail')
