/**
 * The command room (docs/api/command-room.md): the caller's tasks, agents and workflows that act
 * once or on a schedule as them. The list (`commandRoom.list`) and one task with its firing
 * history (`commandRoom.retrieve`, `commandRoom.firings`) share the route: `?task=<uuid>` opens a
 * task, so the browser's back button and links work. Storing and editing happen in a dialog
 * (`commandRoom.store`, `commandRoom.update`); pause, resume, run now and delete act at once
 * (`commandRoom.update`, `commandRoom.run`, `commandRoom.delete`).
 */
import '@mantine/dates/styles.css'
import { Button } from '@mantine/core'
import { useState } from 'react'
import { useSearchParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { TaskDetail } from './TaskDetail.tsx'
import { TaskForm } from './TaskForm.tsx'
import { TaskList } from './TaskList.tsx'
import type { Task } from './task-model.ts'

/** The dialog: closed, storing a new task, or editing one. */
type Editing = { open: false } | { open: true; task: Task | null }

export default function CommandRoomScreen() {
  const [params, setParams] = useSearchParams()
  const taskUuid = params.get('task')
  const [editing, setEditing] = useState<Editing>({ open: false })
  return (
    <>
      {taskUuid ? (
        <TaskDetail key={taskUuid} taskUuid={taskUuid} onEdit={(task) => setEditing({ open: true, task })} onDeleted={() => setParams({})} />
      ) : (
        <>
          <ScreenTitle title="Command room">
            <Button onClick={() => setEditing({ open: true, task: null })}>New task</Button>
          </ScreenTitle>
          <TaskList />
        </>
      )}
      {editing.open ? (
        <TaskForm
          key={editing.task?.uuid ?? 'new'}
          task={editing.task}
          onClose={() => setEditing({ open: false })}
          onSaved={(task) => {
            setEditing({ open: false })
            if (!editing.task) setParams({ task: task.uuid })
          }}
        />
      ) : null}
    </>
  )
}
