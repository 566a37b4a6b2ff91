/**
 * A drop area for files (`@mantine/dropzone`), dropped or picked with a click or the keyboard,
 * handed to `onFiles` to upload (../lib/upload.ts). Files the browser can already tell are refused
 * (a type off `accept`, too many) are said in words and never sent; everything else is left to
 * the service, whose refusal the caller shows as `error`.
 *
 * Only the screens that upload import this module, so the dropzone and its styles load with them
 * and not with the first screen.
 */
import { Group, Stack, Text } from '@mantine/core'
import { Dropzone, type FileRejection } from '@mantine/dropzone'
import '@mantine/dropzone/styles.css'
import { useState } from 'react'

const REJECTION_WORDS: Record<string, string> = {
  'file-invalid-type': 'not a type accepted here',
  'file-too-large': 'too large',
  'too-many-files': 'one file at a time',
}

/** What the browser refused, one phrase per file. */
function describeRejections(rejections: FileRejection[]): string {
  return rejections
    .map(({ file, errors }) => `“${file.name}”: ${errors.map((error) => REJECTION_WORDS[error.code] ?? error.message).join(', ')}`)
    .join('; ')
}

export function FileDrop({
  label,
  hint,
  accept,
  multiple = false,
  loading = false,
  disabled = false,
  error,
  onFiles,
}: {
  /** The input's accessible name, and the first line of the area. */
  label: string
  /** What may be dropped, in words. */
  hint: string
  /** MIME types with their extensions (`{'text/markdown': ['.md']}`): the picker offers only these. */
  accept?: Record<string, string[]>
  multiple?: boolean
  /** An upload under way: the area shows a loader and takes nothing more. */
  loading?: boolean
  disabled?: boolean
  /** The service's refusal of the last upload, in words. */
  error?: string | null
  onFiles: (files: File[]) => void
}) {
  const [rejected, setRejected] = useState<string | null>(null)
  const shown = rejected ?? error
  return (
    <Stack gap={4}>
      <Dropzone
        onDrop={(files) => {
          setRejected(null)
          if (files.length) onFiles(files)
        }}
        onReject={(rejections) => setRejected(describeRejections(rejections))}
        accept={accept}
        multiple={multiple}
        loading={loading}
        disabled={disabled}
        inputProps={{ 'aria-label': label }}
        aria-invalid={shown ? true : undefined}
      >
        <Group justify="center" mih={72} style={{ pointerEvents: 'none', textAlign: 'center' }}>
          <Stack gap={2} align="center">
            <Dropzone.Accept>
              <Text fw={600}>Drop to upload</Text>
            </Dropzone.Accept>
            <Dropzone.Reject>
              <Text fw={600} c="red">
                Not a type accepted here
              </Text>
            </Dropzone.Reject>
            <Dropzone.Idle>
              <Text fw={600}>{label}</Text>
            </Dropzone.Idle>
            <Text size="sm" c="dimmed">
              Drag {multiple ? 'files' : 'a file'} here, or click to choose. {hint}
            </Text>
          </Stack>
        </Group>
      </Dropzone>
      {shown ? (
        <Text size="sm" c="red" role="alert" style={{ overflowWrap: 'anywhere' }}>
          {shown}
        </Text>
      ) : null}
    </Stack>
  )
}
