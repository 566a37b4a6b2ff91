/**
 * Saves data the console read as a file, through the browser's own download: a Blob behind an
 * `<a download>` clicked once (the page's Content-Security-Policy allows `blob:`; nothing leaves
 * the browser).
 */

/** Downloads `value` as pretty-printed JSON named `fileName`. */
export function downloadJson(fileName: string, value: unknown): void {
  saveBlob(fileName, new Blob([`${JSON.stringify(value, null, 2)}\n`], { type: 'application/json' }))
}

/** Downloads `blob` (an export the service answered, say) as `fileName`. */
export function saveBlob(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = fileName
  link.style.display = 'none'
  document.body.append(link)
  link.click()
  link.remove()
  // Revoked once the download has taken the data (revoking at once can cancel it in some browsers).
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}
