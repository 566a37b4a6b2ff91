/**
 * The web console's entry (docs/console.md): Mantine's theme, TanStack Query's cache, tRPC's
 * integration with it over the tRPC client (lib/trpc.ts), and the routes. A 401 from any call
 * ends the session and shows sign-in.
 */
import '@mantine/core/styles.css'
import '@mantine/notifications/styles.css'
import { MantineProvider } from '@mantine/core'
import { Notifications } from '@mantine/notifications'
import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query'
import { StrictMode } from 'react'
import { createRoot } from 'react-dom/client'
import { RouterProvider } from 'react-router'
import { api, isUnauthorized, problemOf } from './lib/api.ts'
import { forgetSession } from './lib/session.tsx'
import { TRPCProvider } from './lib/trpc.ts'
import { router } from './routes.tsx'

/** An expired or revoked token: forget it and go to sign-in, once, saying why. */
function onCallError(error: unknown) {
  if (!isUnauthorized(error) || location.pathname.startsWith('/console/sign-')) return
  forgetSession()
  queryClient.clear()
  void router.navigate(`/sign-in?expired=1&next=${encodeURIComponent(location.pathname.replace(/^\/console/, '') + location.search)}`)
}

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError: onCallError }),
  mutationCache: new MutationCache({ onError: onCallError }),
  defaultOptions: {
    queries: {
      // A 4xx will answer the same again; a network failure may not.
      retry: (failures, error) => failures < 2 && problemOf(error).status === 0,
      refetchOnWindowFocus: false,
      staleTime: 5_000,
    },
  },
})

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <MantineProvider defaultColorScheme="auto">
      <Notifications position="bottom-right" />
      <QueryClientProvider client={queryClient}>
        <TRPCProvider trpcClient={api} queryClient={queryClient}>
          <RouterProvider router={router} />
        </TRPCProvider>
      </QueryClientProvider>
    </MantineProvider>
  </StrictMode>,
)
