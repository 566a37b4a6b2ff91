/**
 * The command room's data: the caller's tasks (`commandRoom.list`), one task
 * (`commandRoom.retrieve`) and its firings (`commandRoom.firings`), and what changes them:
 * `commandRoom.store`, `commandRoom.update` (an edit, or pause and resume), `commandRoom.run`
 * (run now) and `commandRoom.delete`. The targets a task picks from come from
 * ../agents/api.ts and ../workflows/api.ts.
 *
 * Every change marks all of the command room's queries stale (a task, the lists, the firings), so
 * its outcome shows wherever the task is on screen.
 */
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query'
import { useEffect, useRef } from 'react'
import type { RouterInputs, RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type MutationConfig, type TRPC, updatingCache } from '../../lib/trpc.ts'
import type { Firing, Task } from './task-model.ts'

export type TasksInput = Exclude<RouterInputs['commandRoom']['list'], void | undefined>

/** How often the firings are read again while one is queued or running. */
const FIRING_REFRESH_MS = 1500

/** One page of tasks; the previous page stays shown while the next loads. */
export const tasksQueryOptions = (trpc: TRPC, input: TasksInput) => trpc.commandRoom.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useTasks(input: TasksInput) {
  return useQuery(tasksQueryOptions(useTRPC(), input))
}

export const taskQueryOptions = (trpc: TRPC, taskUuid: string) => trpc.commandRoom.retrieve.queryOptions({ task_uuid: taskUuid })

export function useTask(taskUuid: string) {
  return useQuery(taskQueryOptions(useTRPC(), taskUuid))
}

/** True while a firing of `firings` is queued or running. */
export const unsettled = (firings: Firing[] | undefined) => Boolean(firings?.some((f) => f.status === 'queued' || f.status === 'running'))

/** A page of a task's firings, read again every 1.5 s while one of them is queued or running. */
export const firingsQueryOptions = (trpc: TRPC, taskUuid: string, page: number) =>
  trpc.commandRoom.firings.queryOptions(
    { task_uuid: taskUuid, page, per_page: 20 },
    { placeholderData: keepPreviousData, refetchInterval: (query) => (unsettled(query.state.data?.data) ? FIRING_REFRESH_MS : false) },
  )

/**
 * The firings of `task`, page `page`. They are read again when the task says it fired again
 * (its `firings_count`); a firing that ends changes the task too (last status, last run, next
 * run), so the task and the lists are read again then.
 */
export function useFirings(task: Task, page: number) {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  const firings = useQuery(firingsQueryOptions(trpc, task.uuid, page))
  const busy = unsettled(firings.data?.data)
  const wasBusy = useRef(busy)
  useEffect(() => {
    if (wasBusy.current && !busy) {
      void queryClient.invalidateQueries(trpc.commandRoom.retrieve.queryFilter({ task_uuid: task.uuid }))
      void queryClient.invalidateQueries(trpc.commandRoom.list.pathFilter())
    }
    wasBusy.current = busy
  }, [busy, queryClient, trpc, task.uuid])
  const count = useRef(task.firings_count)
  useEffect(() => {
    if (count.current === task.firings_count) return
    count.current = task.firings_count
    void queryClient.invalidateQueries(trpc.commandRoom.firings.queryFilter({ task_uuid: task.uuid }))
  }, [task.firings_count, queryClient, trpc, task.uuid])
  return firings
}

/** After any change: every command room query is stale. */
function useRefreshCommandRoom() {
  const trpc = useTRPC()
  const queryClient = useQueryClient()
  return () => void queryClient.invalidateQueries(trpc.commandRoom.pathFilter())
}

export function useStoreTask(config?: MutationConfig<RouterOutputs['commandRoom']['store'], RouterInputs['commandRoom']['store']>) {
  const refresh = useRefreshCommandRoom()
  return useMutation(
    useTRPC().commandRoom.store.mutationOptions(
      updatingCache(config, refresh),
    ),
  )
}

/** An edit, or pause and resume (`is_active` alone). */
export function useUpdateTask(config?: MutationConfig<RouterOutputs['commandRoom']['update'], RouterInputs['commandRoom']['update']>) {
  const refresh = useRefreshCommandRoom()
  return useMutation(
    useTRPC().commandRoom.update.mutationOptions(
      updatingCache(config, refresh),
    ),
  )
}

/** Fires the task now; the new firing shows in its history. */
export function useRunTask(config?: MutationConfig<RouterOutputs['commandRoom']['run'], RouterInputs['commandRoom']['run']>) {
  const refresh = useRefreshCommandRoom()
  return useMutation(
    useTRPC().commandRoom.run.mutationOptions(
      updatingCache(config, refresh),
    ),
  )
}

export function useDeleteTask(config?: MutationConfig<RouterOutputs['commandRoom']['delete'], RouterInputs['commandRoom']['delete']>) {
  const refresh = useRefreshCommandRoom()
  return useMutation(
    useTRPC().commandRoom.delete.mutationOptions(
      updatingCache(config, refresh),
    ),
  )
}
