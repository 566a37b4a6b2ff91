/**
 * An endpoint's signing secret, shown the one time the service answers it (after a create or a
 * rotation): a warning that it is never shown again, the secret selectable, a copy button, and
 * "Done", which closes the dialog (the dialog then forgets the secret).
 */
import { Alert, Button, CopyButton, Group, Stack, Textarea } from '@mantine/core'
import type { ReactNode } from 'react'

export function SecretShown({
  secret,
  label,
  children,
  onDone,
}: {
  secret: string
  label: string
  children?: ReactNode
  onDone: () => void
}) {
  return (
    <Stack>
      <Alert color="yellow" title="Copy it now" role="alert">
        This is the only time the signing secret is shown: it is never shown again. The receiver checks each delivery's{' '}
        <code>webhook-signature</code> with it (Standard Webhooks).{children ? <> {children}</> : null}
      </Alert>
      <Textarea
        label={label}
        readOnly
        autosize
        minRows={2}
        value={secret}
        onFocus={(e) => e.currentTarget.select()}
        styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', wordBreak: 'break-all' } }}
      />
      <Group justify="space-between">
        <CopyButton value={secret}>
          {({ copied, copy }) => (
            <Button variant={copied ? 'filled' : 'light'} color={copied ? 'teal' : undefined} onClick={copy}>
              {copied ? 'Copied' : 'Copy secret'}
            </Button>
          )}
        </CopyButton>
        <Button onClick={onDone}>Done</Button>
      </Group>
    </Stack>
  )
}
