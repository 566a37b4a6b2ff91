/**
 * Sign-in and sign-up (docs/api/authentication.md): both answer a basic token, which the console
 * keeps and sends as the bearer. After an expired token the sign-in screen says so; it calls
 * nothing that needs a token, so an expired one cannot send it round in a loop.
 *
 * Single sign-on (docs/api/sso.md): when the server has a provider, the sign-in screen offers
 * "Sign in with <name>", a link through `GET /api/v1/auth/oidc` to the provider and back to
 * {@link OidcCallback} with a one-time code, which it exchanges for the token. A sign-in the
 * provider or the server refused comes back to the sign-in screen with `error=<reason>`, said in
 * words there. With password sign-in turned off, the form is not shown.
 */
import { Alert, Anchor, Button, Container, Divider, Group, Loader, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core'
import { useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import type { MutationConfig } from '../../lib/trpc.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useOidcToken, useProviders, useSignIn, useSignUp } from './api.ts'

/** Where the screen asked for before a single sign-on is kept while the browser visits the provider. */
const SSO_NEXT_KEY = 'aw.sso.next'
/** The console path the provider's round trip comes back to (a route of ../../routes.tsx). */
const SSO_RETURN_PATH = '/console/sign-in/oidc'

/** Why a single sign-on failed, in words, by the server's reason (docs/api/sso.md, "Reasons"). */
const SSO_REASONS: Record<string, string> = {
  access_denied: 'The sign-in was cancelled or refused at the identity provider.',
  provider_error: 'The identity provider refused the sign-in.',
  provider_unavailable: 'The identity provider could not be reached. Try again in a moment.',
  invalid_id_token: 'The identity provider’s answer could not be verified.',
  email_missing: 'The identity provider did not share your e-mail address.',
  email_not_verified: 'Your e-mail address is not verified at the identity provider.',
  sign_up_disabled: 'There is no account for your e-mail address here, and new accounts are not open.',
  code_invalid: 'That sign-in link has expired or was already used. Sign in again.',
}

/** The reason of a failed single sign-on in words; an unknown one as it came. */
export const ssoReason = (reason: string): string => SSO_REASONS[reason] ?? `Single sign-on failed (${reason}).`

/** Where to go after signing in: the `next` the screen was given, if it is a console path. */
function useNext(): string {
  const [params] = useSearchParams()
  const next = params.get('next') ?? ''
  return next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/sign-') ? next : '/agents'
}

function AuthFrame({ title, children }: { title: string; children: ReactNode }) {
  return (
    <Container size={420} py={48}>
      <Title order={1} ta="center" size="h2">
        Agent Workspace
      </Title>
      <Text c="dimmed" ta="center" mb="lg">
        {title}
      </Text>
      <Paper withBorder shadow="sm" p="lg" radius="md">
        {children}
      </Paper>
    </Container>
  )
}

/** A mutation hook of ./api.ts that starts a session with the form's fields. */
type UseStart<Fields> = (config: MutationConfig<unknown, Fields>) => { mutate: (form: Fields) => void; isPending: boolean; error: unknown }

/**
 * Sign-in and sign-up alike: the form's fields (`initial`), sent with `useStart`'s mutation on
 * submit; on success (the answer's token is kept by it) the console goes on to the screen asked
 * for before (`next`). `field(name)` binds an input to its value and to the refusal's issue at
 * that field.
 */
function useSessionForm<Fields extends Record<string, string>>(initial: Fields, useStart: UseStart<Fields>) {
  const navigate = useNavigate()
  const next = useNext()
  const [form, setForm] = useState(initial)
  const start = useStart({ onSuccess: () => void navigate(next, { replace: true }) })
  const problem = start.error ? problemOf(start.error) : null
  const submit = (event: FormEvent) => {
    event.preventDefault()
    start.mutate(form)
  }
  const field = (name: keyof Fields & string) => ({
    required: true,
    value: form[name],
    onChange: (event: { currentTarget: { value: string } }) => setForm({ ...form, [name]: event.currentTarget.value }),
    error: fieldError(problem, name),
  })
  return { pending: start.isPending, problem, fields: Object.keys(initial), submit, field }
}

/** The link to the other form, keeping `next` (the query string). */
function OtherForm({ question, to, label }: { question: string; to: string; label: string }) {
  return (
    <Group justify="center" gap={4}>
      <Text size="sm">{question}</Text>
      <Anchor component={Link} to={`${to}${location.search}`} size="sm">
        {label}
      </Anchor>
    </Group>
  )
}

export function SignIn() {
  const [params] = useSearchParams()
  const next = useNext()
  const providers = useProviders()
  const { pending, problem, fields, submit, field } = useSessionForm({ email: '', password: '' }, useSignIn)
  const oidc = providers.data?.data.oidc ?? null
  // Shown unless the server says it is off (while asking, or when it cannot answer, the form stays).
  const password = providers.data?.data.password !== false
  const error = params.get('error')
  return (
    <AuthFrame title="Sign in to your workspace">
      <Stack>
        {params.get('expired') ? (
          <Alert color="yellow" role="status">
            Your session ended. Sign in again to go on.
          </Alert>
        ) : null}
        {error ? (
          <Alert color="red" role="alert" title="Single sign-on did not work">
            {ssoReason(error)}
          </Alert>
        ) : null}
        {oidc ? (
          <Button
            component="a"
            variant={password ? 'default' : 'filled'}
            href={`/api/v1/auth/oidc?redirect=${encodeURIComponent(SSO_RETURN_PATH)}`}
            onClick={() => sessionStorage.setItem(SSO_NEXT_KEY, next)}
          >
            Sign in with {oidc.name}
          </Button>
        ) : null}
        {oidc && password ? <Divider label="or with your password" labelPosition="center" /> : null}
        {password ? (
          <form onSubmit={submit} noValidate>
            <Stack>
              <FormProblem problem={problem} fields={fields} />
              <TextInput label="E-mail" type="email" autoComplete="email" {...field('email')} />
              <PasswordInput label="Password" autoComplete="current-password" {...field('password')} />
              <Button type="submit" loading={pending}>
                Sign in
              </Button>
              <OtherForm question="No account yet?" to="/sign-up" label="Sign up" />
            </Stack>
          </form>
        ) : null}
      </Stack>
    </AuthFrame>
  )
}

/**
 * `/console/sign-in/oidc?code=<one-time code>`: where a single sign-on comes back. The code is
 * exchanged once (`sso.token`) for the session's token, then the console goes on to the screen
 * asked for before; a code that is gone (expired, used) sends the browser to sign in again, with
 * why.
 */
export function OidcCallback() {
  const [params] = useSearchParams()
  const navigate = useNavigate()
  const exchanged = useRef(false)
  const exchange = useOidcToken({
    onSuccess: () => {
      const saved = sessionStorage.getItem(SSO_NEXT_KEY) ?? ''
      sessionStorage.removeItem(SSO_NEXT_KEY)
      const next = saved.startsWith('/') && !saved.startsWith('//') && !saved.startsWith('/sign-') ? saved : '/agents'
      void navigate(next, { replace: true })
    },
    onError: () => void navigate('/sign-in?error=code_invalid', { replace: true }),
  })
  const code = params.get('code')
  useEffect(() => {
    // Once: the code is good for one exchange (React may run an effect twice in development).
    if (exchanged.current) return
    exchanged.current = true
    if (code) exchange.mutate({ code })
    else void navigate('/sign-in?error=code_invalid', { replace: true })
  }, [code, exchange, navigate])
  return (
    <AuthFrame title="Signing you in">
      <Group justify="center" gap="sm" role="status">
        <Loader size="sm" />
        <Text>Finishing single sign-on…</Text>
      </Group>
    </AuthFrame>
  )
}

export function SignUp() {
  const { pending, problem, fields, submit, field } = useSessionForm({ name: '', email: '', password: '' }, useSignUp)
  return (
    <AuthFrame title="Create an account and its workspace">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={fields} />
          <TextInput label="Name" autoComplete="name" {...field('name')} />
          <TextInput label="E-mail" type="email" autoComplete="email" {...field('email')} />
          <PasswordInput label="Password" description="At least 8 characters" autoComplete="new-password" {...field('password')} />
          <Button type="submit" loading={pending}>
            Sign up
          </Button>
          <OtherForm question="Have an account?" to="/sign-in" label="Sign in" />
        </Stack>
      </form>
    </AuthFrame>
  )
}
