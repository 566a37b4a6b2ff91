/** Placeholder: filled in by the screen's own slice. */
import { ScreenTitle } from '../../ui/ListControls.tsx'

export default function ExecutionsScreen() {
  return <ScreenTitle title="ExecutionsScreen" />
}
