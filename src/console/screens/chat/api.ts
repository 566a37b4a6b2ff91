/**
 * The chat's data: an agent's threads (`threads.list`, 30 a page, latest activity first) and one
 * thread (`threads.retrieve`), a thread's messages (`messages.list`, newest 50 a page), a run
 * (`runs.retrieve`), and the runs a message starts: `runs.thread` in a thread, `runs.agent`
 * without one (it makes the thread, which is then named after the message with
 * `threads.update`), stopped with `runs.cancel`. Also the threads as a picker's choices (the
 * metrics filter). The agent itself comes from ../agents/api.ts; a run's events (`runs.events`,
 * Server-Sent Events) are followed by ./runStream.ts on the client itself.
 *
 * Starting a run marks the thread's messages and the agent's threads stale; when it ends,
 * {@link useRefreshConversation} reads both again.
 */
import { skipToken, useInfiniteQuery, useQuery, useQueryClient } from '@tanstack/react-query'
import { useCallback } from 'react'
import { api, type RouterInputs, type RouterOutputs } from '../../lib/api.ts'
import { pagedInfiniteOptions, useSubmission, useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'

/** Longest thread name (the first line of the first message, cut). */
const NAME_MAX = 80

/** An agent's threads, page by page. */
export function threadsQueryOptions(trpc: TRPC, agentUuid: string) {
  const input = { agent_uuid: agentUuid, per_page: 30, sort: '-updated_at' } as const
  return pagedInfiniteOptions(trpc.threads.list.pathKey(), input, (page) => api.threads.list.query({ ...input, page }))
}

export function useThreads(agentUuid: string) {
  return useInfiniteQuery(threadsQueryOptions(useTRPC(), agentUuid))
}

/** A thread's messages, newest first, page by page. */
export function messagesQueryOptions(trpc: TRPC, threadUuid: string) {
  const input = { thread_uuid: threadUuid, per_page: 50, sort: '-created_at' } as const
  return pagedInfiniteOptions(trpc.messages.list.pathKey(), input, (page) => api.messages.list.query({ ...input, page }))
}

/** The messages read so far, oldest first; nothing is read while `threadUuid` is null (a new thread). */
export function useMessages(threadUuid: string | null) {
  return useInfiniteQuery({
    ...messagesQueryOptions(useTRPC(), threadUuid ?? ''),
    enabled: threadUuid !== null,
    select: (data) => data.pages.flatMap((page) => page.data).reverse(),
  })
}

export const threadQueryOptions = (trpc: TRPC, threadUuid: string | null) =>
  trpc.threads.retrieve.queryOptions(threadUuid === null ? skipToken : { thread_uuid: threadUuid })

/** One thread; nothing is read while `threadUuid` is null. */
export function useThread(threadUuid: string | null) {
  return useQuery(threadQueryOptions(useTRPC(), threadUuid))
}

/** The threads a picker offers: the 100 with the latest activity (read while `enabled`). */
export const threadChoicesQueryOptions = (trpc: TRPC, enabled: boolean) =>
  trpc.threads.list.queryOptions({ per_page: 100, sort: '-updated_at' }, { enabled })

export function useThreadChoices(enabled: boolean) {
  return useQuery(threadChoicesQueryOptions(useTRPC(), enabled))
}

/** A run as it stands now (never from the cache); nothing is read while `runUuid` is null. */
export const runQueryOptions = (trpc: TRPC, runUuid: string | null) =>
  trpc.runs.retrieve.queryOptions(runUuid === null ? skipToken : { run_uuid: runUuid }, { staleTime: 0, gcTime: 0 })

export function useRun(runUuid: string | null) {
  return useQuery(runQueryOptions(useTRPC(), runUuid))
}

/** Reads the thread (its active run), its messages and the agent's threads again (a run ended); resolves once they are read. */
export function useRefreshConversation(agentUuid: string, threadUuid: string | null): () => Promise<void> {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useCallback(async () => {
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: messagesQueryOptions(trpc, threadUuid ?? '').queryKey }),
      queryClient.invalidateQueries({ queryKey: threadsQueryOptions(trpc, agentUuid).queryKey }),
      // The thread's active run (busy or not) changes with every run.
      threadUuid ? queryClient.invalidateQueries({ queryKey: threadQueryOptions(trpc, threadUuid).queryKey }) : undefined,
    ])
  }, [trpc, queryClient, agentUuid, threadUuid])
}

/** A message in an existing thread (`runs.thread`); the thread's messages and the agent's threads are read again. */
export function useSendInThread(
  agentUuid: string,
  config?: MutationConfig<RouterOutputs['runs']['thread'], RouterInputs['runs']['thread']>,
) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission(
    trpc.runs.thread.mutationOptions(
      updatingCache(config, (answer, input) => {
        void queryClient.invalidateQueries({ queryKey: messagesQueryOptions(trpc, input.thread_uuid).queryKey })
        void queryClient.invalidateQueries({ queryKey: threadsQueryOptions(trpc, agentUuid).queryKey })
      }),
    ),
  )
}

/**
 * A first message (`runs.agent`), which makes a thread: it is named after the message's first
 * line (`threads.update`; a name is a convenience, so its failure is ignored and the thread is
 * listed by its date) and the agent's threads are read again, before the screen's `onSuccess`.
 */
export function useStartThread(config?: MutationConfig<RouterOutputs['runs']['agent'], RouterInputs['runs']['agent']>) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return useSubmission(
    trpc.runs.agent.mutationOptions({
      onSuccess: async (answer, input) => {
        const thread = answer.data.run.thread_uuid
        if (thread) {
          const name = input.input.trim().split('\n')[0].slice(0, NAME_MAX).trim()
          if (name) await api.threads.update.mutate({ thread_uuid: thread, name }).catch(() => {})
          void queryClient.invalidateQueries({ queryKey: threadsQueryOptions(trpc, input.agent_uuid).queryKey })
        }
        return config?.onSuccess?.(answer, input)
      },
      onError: config?.onError,
    }),
  )
}

/** Stops a run (`runs.cancel`); its end arrives as its final event. */
export function useCancelRun() {
  return useSubmission(useTRPC().runs.cancel.mutationOptions())
}
