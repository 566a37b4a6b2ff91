/**
 * tRPC's TanStack React Query integration over the console's client (./api.ts, which stays the
 * link layer): `TRPCProvider` (in main.tsx) hands that client and the query cache down, and
 * `useTRPC()` answers the options proxy the area modules (`screens/<area>/api.ts`, ./session-api.ts)
 * build their queries and mutations from: `trpc.agents.list.queryOptions(input)`,
 * `trpc.agents.create.mutationOptions()`, and the typed keys and filters
 * (`trpc.agents.pathFilter()`, `trpc.knowledge.list.queryFilter({ agent_uuid })`).
 *
 * Keys have tRPC's shape, `[['agents', 'list'], { input, type: 'query' }]`, so a filter on a path
 * matches every query beneath it. {@link pagedInfiniteOptions} gives the service's page-numbered
 * lists read as infinite queries the same shape, since tRPC's own infinite options want a cursor.
 */
import {
  infiniteQueryOptions,
  useMutation,
  type DefaultError,
  type UseMutationOptions,
  type UseMutationResult,
} from '@tanstack/react-query'
import { useCallback, useMemo, useRef } from 'react'
import { createTRPCContext, type TRPCOptionsProxy, type TRPCQueryKey } from '@trpc/tanstack-react-query'
import type { AppRouter } from './api.ts'

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>()

/** The options proxy `useTRPC()` answers, for the `queryOptions` builders that take it. */
export type TRPC = TRPCOptionsProxy<AppRouter>

/** What every page of a list answers about the paging. */
interface Paged {
  meta: { current_page: number; last_page: number }
}

/**
 * Infinite-query options for a page-numbered list: `path` is the procedure's `pathKey()`, `input`
 * what the pages share (in the key), `fetchPage` reads page n of it. The key is tRPC's infinite
 * key (`[path, { input, type: 'infinite' }]`), so the procedure's `pathFilter()` matches it.
 */
export function pagedInfiniteOptions<Input extends object, Page extends Paged>(
  path: TRPCQueryKey,
  input: Input,
  fetchPage: (page: number) => Promise<Page>,
) {
  return infiniteQueryOptions({
    queryKey: [path[0], { input, type: 'infinite' }],
    queryFn: ({ pageParam }) => fetchPage(pageParam),
    initialPageParam: 1,
    getNextPageParam: (last) => (last.meta.current_page < last.meta.last_page ? last.meta.current_page + 1 : undefined),
  })
}

/**
 * What a screen adds to an area's mutation hook: its own reactions (a notification, a navigation,
 * resetting a form), run after the hook has brought the cache up to date.
 */
export interface MutationConfig<Data, Variables> {
  onSuccess?: (data: Data, variables: Variables) => unknown
  onError?: (error: unknown, variables: Variables) => unknown
}

/**
 * The callbacks of an area's mutation hook: `update` brings the cache up to date with the answer,
 * then the screen's own `config` reacts; its `onError` is the screen's. Pass the result to the
 * procedure's `mutationOptions`.
 */
export function updatingCache<Data, Variables>(
  config: MutationConfig<Data, Variables> | undefined,
  update: (data: Data, variables: Variables) => void,
) {
  return {
    onSuccess: (data: Data, variables: Variables) => {
      update(data, variables)
      return config?.onSuccess?.(data, variables)
    },
    onError: config?.onError,
  }
}

/**
 * `useMutation` for a submission: one at a time. A second `mutate` while the first is on its way
 * (a double click dispatched before the button could show it is busy: the mutation's pending
 * state reaches the screen a render later) joins the first (`mutateAsync` answers its promise)
 * instead of sending again, so the screen's callbacks run once. Each call that does go out
 * carries its own Idempotency-Key (../lib/api.ts), kept across the client's retries of it; a call
 * after the first has been answered is a new submission with a new key. Area hooks build their
 * mutations with it; TanStack's own `retry` stays off for mutations (a retry there would be a new
 * call with a new key), the client retries with the same key instead.
 */
export function useSubmission<Data = unknown, Error = DefaultError, Variables = void, Context = unknown>(
  options: UseMutationOptions<Data, Error, Variables, Context>,
): UseMutationResult<Data, Error, Variables, Context> {
  const mutation = useMutation(options)
  const onItsWay = useRef<Promise<Data> | null>(null)
  const { mutateAsync: send } = mutation
  const mutateAsync = useCallback<UseMutationResult<Data, Error, Variables, Context>['mutateAsync']>(
    (...args) => {
      if (onItsWay.current) return onItsWay.current
      const promise = send(...args)
      onItsWay.current = promise
      const clear = () => {
        if (onItsWay.current === promise) onItsWay.current = null
      }
      promise.then(clear, clear)
      return promise
    },
    [send],
  )
  const mutate = useCallback<UseMutationResult<Data, Error, Variables, Context>['mutate']>(
    (...args) => {
      // The failure is in the mutation's state (and its onError): nothing more to do with it here.
      mutateAsync(...args).catch(() => {})
    },
    [mutateAsync],
  )
  return useMemo(
    () => ({ ...mutation, mutate, mutateAsync }) as UseMutationResult<Data, Error, Variables, Context>,
    [mutation, mutate, mutateAsync],
  )
}
