/**
 * Settings → Sign-in methods, read-only (`sso.providers`, docs/api/sso.md): whether this server
 * takes e-mail and password (`PASSWORD_SIGN_IN`) and the name of its OpenID Connect provider when
 * one is configured. Both are the server's configuration, changed by whoever runs it.
 */
import { Badge, Group, Paper, Stack, Text } from '@mantine/core'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useSignInMethods } from './api.ts'
import { SectionTitle } from './SettingsParts.tsx'

export default function SignInTab() {
  const methods = useSignInMethods()
  const data = methods.data?.data
  return (
    <>
      <SectionTitle title="Sign-in methods" />
      <Text c="dimmed" size="sm" mb="md">
        How people sign in to this server. These are set in the server's configuration, not here.
      </Text>
      {methods.isPending ? <Loading label="Loading the sign-in methods" /> : null}
      {methods.error ? <ErrorNotice error={methods.error} onRetry={() => void methods.refetch()} /> : null}
      {data ? (
        <Stack gap="sm" maw={640}>
          <Paper withBorder p="sm">
            <Group justify="space-between" wrap="nowrap">
              <div>
                <Text fw={600}>E-mail and password</Text>
                <Text size="sm" c="dimmed">
                  PASSWORD_SIGN_IN
                </Text>
              </div>
              <Badge color={data.password ? 'green' : 'gray'} variant="light">
                {data.password ? 'on' : 'off'}
              </Badge>
            </Group>
          </Paper>
          <Paper withBorder p="sm">
            <Group justify="space-between" wrap="nowrap">
              <div style={{ minWidth: 0 }}>
                <Text fw={600}>Single sign-on (OpenID Connect)</Text>
                <Text size="sm" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
                  {data.oidc ? `“Sign in with ${data.oidc.name}”` : 'Not configured'}
                </Text>
              </div>
              <Badge color={data.oidc ? 'green' : 'gray'} variant="light">
                {data.oidc ? 'on' : 'off'}
              </Badge>
            </Group>
          </Paper>
        </Stack>
      ) : null}
    </>
  )
}
