/**
 * What can be done to a stored task from the list and from its page: pause or resume
 * (`commandRoom.update` with `is_active`, `PUT /api/v1/command-room/tasks/{task_uuid}`), run now
 * (`commandRoom.run`, `POST .../run`) and delete (`commandRoom.delete`, `DELETE ...`). Each
 * refreshes the command room's queries (they all start with `commandRoom`), where its outcome
 * shows (the state, the new firing); a refusal, and a deletion, which takes the task off the
 * screen, are told in a notification.
 */
import { notifications } from '@mantine/notifications'
import { useMutation, useQueryClient } from '@tanstack/react-query'
import { api } from '../../lib/api.ts'
import { describeProblem } from '../../ui/states.tsx'
import type { Task } from './task-model.ts'

/** The query keys of the command room start with this. */
export const ROOT_KEY = 'commandRoom'

function failed(action: string) {
  return (error: unknown) => {
    const { title, detail } = describeProblem(error)
    notifications.show({ color: 'red', title: `${action} failed: ${title}`, message: detail })
  }
}

export function useTaskActions() {
  const queryClient = useQueryClient()
  const refresh = () => queryClient.invalidateQueries({ queryKey: [ROOT_KEY] })

  const setActive = useMutation({
    mutationFn: ({ task, active }: { task: Task; active: boolean }) => api.commandRoom.update.mutate({ task_uuid: task.uuid, is_active: active }),
    onSuccess: () => void refresh(),
    onError: failed('Changing the task'),
  })
  const runNow = useMutation({
    mutationFn: (task: Task) => api.commandRoom.run.mutate({ task_uuid: task.uuid }),
    onSuccess: () => void refresh(),
    onError: failed('Run now'),
  })
  const remove = useMutation({
    mutationFn: (task: Task) => api.commandRoom.delete.mutate({ task_uuid: task.uuid }),
    onSuccess: (_answer, task) => {
      notifications.show({ color: 'green', message: `${task.name} is deleted. Its past runs and executions stay.` })
      void refresh()
    },
    onError: failed('Deleting the task'),
  })
  return { setActive, runNow, remove }
}
