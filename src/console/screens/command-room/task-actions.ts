/**
 * What can be done to a stored task from the list and from its page: pause or resume
 * (`commandRoom.update` with `is_active`, `PUT /api/v1/command-room/tasks/{task_uuid}`), run now
 * (`commandRoom.run`, `POST .../run`) and delete (`commandRoom.delete`, `DELETE ...`), through
 * ./api.ts, whose hooks refresh the command room's queries, where the outcome shows (the state,
 * the new firing). A refusal is told in a notification; so is a deletion, which takes the task
 * off the screen (by the caller, which knows its name).
 */
import { notifications } from '@mantine/notifications'
import { describeProblem } from '../../ui/states.tsx'
import { useDeleteTask, useRunTask, useUpdateTask } from './api.ts'

function failed(action: string) {
  return (error: unknown) => {
    const { title, detail } = describeProblem(error)
    notifications.show({ color: 'red', title: `${action} failed: ${title}`, message: detail })
  }
}

export function useTaskActions() {
  const setActive = useUpdateTask({ onError: failed('Changing the task') })
  const runNow = useRunTask({ onError: failed('Run now') })
  const remove = useDeleteTask({ onError: failed('Deleting the task') })
  return { setActive, runNow, remove }
}

/** Says that `name` is deleted and what stays of it. */
export const notifyDeleted = (name: string) => notifications.show({ color: 'green', message: `${name} is deleted. Its past runs and executions stay.` })
