/**
 * Sign-in and sign-up (docs/api/authentication.md): both answer a basic token, which the console
 * keeps and sends as the bearer. After an expired token the sign-in screen says so; it calls
 * nothing that needs a token, so an expired one cannot send it round in a loop.
 */
import { Alert, Anchor, Button, Container, Group, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core'
import { useMutation } from '@tanstack/react-query'
import { useState, type FormEvent, type ReactNode } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { api, problemOf } from '../../lib/api.ts'
import { signedIn } from '../../lib/session.tsx'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'

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

/**
 * Sign-in and sign-up alike: `call` on submit; on success the answer's token is kept and the
 * console goes on to the screen asked for before (`next`); a refusal's problem for the fields.
 */
function useSessionStart(call: () => Promise<{ data: { access_token: string } }>) {
  const navigate = useNavigate()
  const next = useNext()
  const start = useMutation({
    mutationFn: call,
    onSuccess: (answer) => {
      signedIn(answer.data.access_token)
      void navigate(next, { replace: true })
    },
  })
  const submit = (event: FormEvent) => {
    event.preventDefault()
    start.mutate()
  }
  return { pending: start.isPending, problem: start.error ? problemOf(start.error) : null, submit }
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
  const [email, setEmail] = useState('')
  const [password, setPassword] = useState('')
  const { pending, problem, submit } = useSessionStart(() => api.auth.signIn.mutate({ email, password }))
  return (
    <AuthFrame title="Sign in to your workspace">
      <form onSubmit={submit} noValidate>
        <Stack>
          {params.get('expired') ? (
            <Alert color="yellow" role="status">
              Your session ended. Sign in again to go on.
            </Alert>
          ) : null}
          <FormProblem problem={problem} fields={['email', 'password']} />
          <TextInput
            label="E-mail"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(e) => setEmail(e.currentTarget.value)}
            error={fieldError(problem, 'email')}
          />
          <PasswordInput
            label="Password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.currentTarget.value)}
            error={fieldError(problem, 'password')}
          />
          <Button type="submit" loading={pending}>
            Sign in
          </Button>
          <OtherForm question="No account yet?" to="/sign-up" label="Sign up" />
        </Stack>
      </form>
    </AuthFrame>
  )
}

export function SignUp() {
  const [form, setForm] = useState({ name: '', email: '', password: '' })
  const set = (key: keyof typeof form) => (event: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: event.currentTarget.value })
  const { pending, problem, submit } = useSessionStart(() => api.auth.signUp.mutate(form))
  return (
    <AuthFrame title="Create an account and its workspace">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={Object.keys(form)} />
          <TextInput
            label="Name"
            autoComplete="name"
            required
            value={form.name}
            onChange={set('name')}
            error={fieldError(problem, 'name')}
          />
          <TextInput
            label="E-mail"
            type="email"
            autoComplete="email"
            required
            value={form.email}
            onChange={set('email')}
            error={fieldError(problem, 'email')}
          />
          <PasswordInput
            label="Password"
            description="At least 8 characters"
            autoComplete="new-password"
            required
            value={form.password}
            onChange={set('password')}
            error={fieldError(problem, 'password')}
          />
          <Button type="submit" loading={pending}>
            Sign up
          </Button>
          <OtherForm question="Have an account?" to="/sign-in" label="Sign in" />
        </Stack>
      </form>
    </AuthFrame>
  )
}
