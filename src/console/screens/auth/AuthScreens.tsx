/**
 * Sign-in and sign-up (docs/api/authentication.md): both answer a basic token, which the console
 * keeps and sends as the bearer. After an expired token the sign-in screen says so; it calls
 * nothing that needs a token, so an expired one cannot send it round in a loop.
 */
import { Alert, Anchor, Button, Container, Group, Paper, PasswordInput, Stack, Text, TextInput, Title } from '@mantine/core'
import { useState, type FormEvent, type ReactNode } from 'react'
import { Link, useNavigate, useSearchParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import type { MutationConfig } from '../../lib/trpc.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useSignIn, useSignUp } from './api.ts'

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
  const { pending, problem, fields, submit, field } = useSessionForm({ email: '', password: '' }, useSignIn)
  return (
    <AuthFrame title="Sign in to your workspace">
      <form onSubmit={submit} noValidate>
        <Stack>
          {params.get('expired') ? (
            <Alert color="yellow" role="status">
              Your session ended. Sign in again to go on.
            </Alert>
          ) : null}
          <FormProblem problem={problem} fields={fields} />
          <TextInput label="E-mail" type="email" autoComplete="email" {...field('email')} />
          <PasswordInput label="Password" autoComplete="current-password" {...field('password')} />
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
