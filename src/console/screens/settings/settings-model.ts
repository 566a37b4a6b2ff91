/**
 * The settings forms' choices, typed by the router's inputs so that a value the service stops
 * taking fails to compile here (the console may not import the server's own constants).
 */
import type { RouterInputs } from '../../lib/api.ts'
import type { Role } from './api.ts'

type ProviderInput = RouterInputs['providers']['create']
type ToolInput = RouterInputs['tools']['create']
type AccountInput = RouterInputs['accounts']['create']

export type ProviderType = ProviderInput['type']
export type ProviderDriver = NonNullable<ProviderInput['driver']>
export type AuthScheme = NonNullable<ProviderInput['auth_scheme']>
export type ToolMethod = NonNullable<ToolInput['method']>
export type ToolType = NonNullable<ToolInput['type']>
export type Visibility = NonNullable<ToolInput['visibility']>
export type AccountVisibility = NonNullable<AccountInput['visibility']>

export const PROVIDER_TYPES = ['llm', 'tool'] as const satisfies readonly ProviderType[]

/** The drivers a custom provider may use, by type (docs/api/resources.md, "Providers"). */
export const DRIVERS: Record<ProviderType, readonly ProviderDriver[]> = {
  llm: ['openai-compatible', 'openai', 'anthropic', 'ollama'],
  tool: ['http'],
}

export const AUTH_SCHEMES = ['bearer', 'header', 'query', 'basic', 'none'] as const satisfies readonly AuthScheme[]

/** Schemes that send the secret under a name the provider gives (`auth_parameter`). */
export const PARAMETER_SCHEMES: readonly AuthScheme[] = ['header', 'query']

export const AUTH_SCHEME_LABELS: Record<AuthScheme, string> = {
  bearer: 'Authorization: Bearer <secret>',
  header: 'A header of its own',
  query: 'A query parameter',
  basic: 'Authorization: Basic',
  none: 'No credential',
}

export const TOOL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const satisfies readonly ToolMethod[]

export const VISIBILITIES = ['private', 'workspace', 'public'] as const satisfies readonly Visibility[]

export const ACCOUNT_VISIBILITIES = ['private', 'workspace'] as const satisfies readonly AccountVisibility[]

export const ROLES = ['member', 'admin', 'owner'] as const satisfies readonly Role[]

export const ROLE_LABELS: Record<Role, string> = {
  member: 'Member (uses the workspace)',
  admin: 'Admin (manages members and settings)',
  owner: 'Owner (also grants ownership, deletes the workspace)',
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

/** A date in the browser's zone. */
export const formatDate = (iso: string) => dateFormat.format(new Date(iso))
