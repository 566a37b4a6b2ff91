/**
 * The console's screens by path (under /console). Every screen but sign-in and sign-up is loaded
 * when first visited, so the first screen's script stays small (docs/console.md, "Speed").
 */
import type { ComponentType } from 'react'
import { createBrowserRouter, Navigate } from 'react-router'
import { Shell } from './ui/Shell.tsx'
import { RouteError } from './ui/states.tsx'
import { OidcCallback, SignIn, SignUp } from './screens/auth/AuthScreens.tsx'

/** A route whose component is its module's default export, loaded on first visit. */
const lazy = (load: () => Promise<{ default: ComponentType }>) => () => load().then((module) => ({ Component: module.default }))

export const router = createBrowserRouter(
  [
    { path: '/sign-in', element: <SignIn />, errorElement: <RouteError /> },
    { path: '/sign-in/oidc', element: <OidcCallback />, errorElement: <RouteError /> },
    { path: '/sign-up', element: <SignUp />, errorElement: <RouteError /> },
    {
      path: '/',
      element: <Shell />,
      errorElement: <RouteError />,
      children: [
        { index: true, element: <Navigate to="/agents" replace /> },
        { path: 'agents', lazy: lazy(() => import('./screens/agents/AgentsScreen.tsx')) },
        { path: 'agents/new', lazy: lazy(() => import('./screens/agents/AgentEditScreen.tsx')) },
        { path: 'agents/:agentUuid', lazy: lazy(() => import('./screens/agents/AgentEditScreen.tsx')) },
        { path: 'chat', lazy: lazy(() => import('./screens/chat/ChatScreen.tsx')) },
        { path: 'chat/:agentUuid', lazy: lazy(() => import('./screens/chat/ChatScreen.tsx')) },
        { path: 'chat/:agentUuid/:threadUuid', lazy: lazy(() => import('./screens/chat/ChatScreen.tsx')) },
        { path: 'approvals', lazy: lazy(() => import('./screens/approvals/ApprovalsScreen.tsx')) },
        { path: 'prompts', lazy: lazy(() => import('./screens/prompts/PromptsScreen.tsx')) },
        { path: 'prompts/:promptUuid', lazy: lazy(() => import('./screens/prompts/PromptEditScreen.tsx')) },
        { path: 'workflows', lazy: lazy(() => import('./screens/workflows/WorkflowsScreen.tsx')) },
        { path: 'workflows/:workflowUuid', lazy: lazy(() => import('./screens/workflows/WorkflowEditScreen.tsx')) },
        { path: 'workflows/:workflowUuid/executions', lazy: lazy(() => import('./screens/workflows/ExecutionsScreen.tsx')) },
        { path: 'datasets', lazy: lazy(() => import('./screens/evaluations/DatasetsScreen.tsx')) },
        { path: 'datasets/:datasetUuid', lazy: lazy(() => import('./screens/evaluations/DatasetScreen.tsx')) },
        { path: 'evaluations', lazy: lazy(() => import('./screens/evaluations/EvaluationsScreen.tsx')) },
        { path: 'evaluations/compare', lazy: lazy(() => import('./screens/evaluations/CompareScreen.tsx')) },
        { path: 'evaluations/:evaluationUuid', lazy: lazy(() => import('./screens/evaluations/EvaluationScreen.tsx')) },
        { path: 'knowledge', lazy: lazy(() => import('./screens/knowledge/KnowledgeScreen.tsx')) },
        { path: 'command-room', lazy: lazy(() => import('./screens/command-room/CommandRoomScreen.tsx')) },
        { path: 'metrics', lazy: lazy(() => import('./screens/metrics/MetricsScreen.tsx')) },
        { path: 'tokens', lazy: lazy(() => import('./screens/tokens/TokensScreen.tsx')) },
        { path: 'webhooks', lazy: lazy(() => import('./screens/webhooks/WebhooksScreen.tsx')) },
        { path: 'webhooks/:endpointUuid', lazy: lazy(() => import('./screens/webhooks/DeliveriesScreen.tsx')) },
        { path: 'audit', lazy: lazy(() => import('./screens/audit/AuditScreen.tsx')) },
        { path: 'usage', lazy: lazy(() => import('./screens/usage/UsageScreen.tsx')) },
        { path: 'settings', lazy: lazy(() => import('./screens/settings/SettingsScreen.tsx')) },
        { path: 'settings/:tab', lazy: lazy(() => import('./screens/settings/SettingsScreen.tsx')) },
        // Inside the frame: a visitor signs in first and comes back with the authorization request's query.
        { path: 'oauth/consent', lazy: lazy(() => import('./screens/oauth/ConsentScreen.tsx')) },
        { path: '*', element: <RouteError notFound /> },
      ],
    },
  ],
  { basename: '/console' },
)
