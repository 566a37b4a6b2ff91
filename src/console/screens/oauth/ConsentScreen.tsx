/**
 * The OAuth consent screen (docs/api/mcp.md, "Authorization"), where `GET /oauth/authorize`
 * sends the browser with the authorization request as its query. Inside the signed-in frame, so
 * a visitor signs in first and comes back here. It shows the client's name and where it sends
 * the browser back to, lets the user pick the workspace the token is bound to, and posts the
 * decision (`oauth.consent`); the answer is the client's redirect URI (with the code, or
 * `error=access_denied`), where the browser then goes.
 */
import { Alert, Button, Group, Paper, Select, Stack, Text, Title } from '@mantine/core'
import { useState } from 'react'
import { useSearchParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useConsent, useOAuthClient, type ConsentInput } from './api.ts'

/** The authorization request's fields the consent takes (`OAuthConsentInput`); other parameters are not passed on. */
const FIELDS = ['client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'state', 'scope', 'resource'] as const

/** The host a redirect URI sends the browser to, or the URI itself when it has none (a native app's scheme). */
function hostOf(uri: string): string {
  try {
    return new URL(uri).host || uri
  } catch {
    return uri
  }
}

export default function ConsentScreen() {
  const [params] = useSearchParams()
  const session = useSession()
  const [workspace, setWorkspace] = useState<string | null>(session.workspace)
  const [leaving, setLeaving] = useState(false)
  const clientId = params.get('client_id') ?? ''
  const client = useOAuthClient(clientId)
  const consent = useConsent({
    onSuccess: (answer) => {
      setLeaving(true)
      window.location.href = answer.data.redirect_uri
    },
  })
  if (!clientId) return <Alert color="red" title="Not an authorization request">This page is opened by an application asking for access.</Alert>
  if (client.isPending) return <Loading label="Loading the application" />
  if (client.isError) return <ErrorNotice error={client.error} />
  const redirectUri = params.get('redirect_uri') ?? client.data.data.redirect_uris[0] ?? ''
  const name = client.data.data.client_name ?? 'An application'
  const decide = (approve: boolean) => {
    const request = Object.fromEntries(FIELDS.filter((key) => params.has(key)).map((key) => [key, params.get(key)!]))
    consent.mutate({ ...request, workspace_uuid: workspace ?? '', approve } as ConsentInput)
  }
  const problem = consent.error ? problemOf(consent.error) : null
  return (
    <Stack maw={520} mx="auto" mt="xl">
      <Paper withBorder p="lg" radius="md">
        <Stack>
          <Title order={2}>Allow {name} to use your agents?</Title>
          <Text size="sm">
            <b>{name}</b> asks to reach the MCP server as you: to list and run the agents, prompts and active workflows of the
            workspace you pick, as you could yourself. You can revoke its access any time under Access tokens.
          </Text>
          <Text size="sm" c="dimmed">
            It will be sent back to <b>{hostOf(redirectUri)}</b>.
          </Text>
          <Select
            label="Workspace it may use"
            data={session.workspaces.map((w) => ({ value: w.uuid, label: w.name }))}
            value={workspace}
            onChange={setWorkspace}
            allowDeselect={false}
            error={problem?.fields.workspace_uuid}
          />
          <FormProblem problem={problem} fields={['workspace_uuid']} />
          <Group justify="flex-end">
            <Button variant="default" onClick={() => decide(false)} disabled={consent.isPending || leaving}>
              Deny
            </Button>
            <Button onClick={() => decide(true)} loading={consent.isPending || leaving} disabled={!workspace}>
              Approve
            </Button>
          </Group>
        </Stack>
      </Paper>
    </Stack>
  )
}
