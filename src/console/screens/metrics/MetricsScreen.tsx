/**
 * Metrics (docs/api/metrics.md): the workspace summary as stat cards (`metrics.workspace`,
 * `GET /api/v1/workspaces/{workspace_uuid}/metrics`), then one of the five metrics endpoints
 * (`metrics.agents`, `.workflows`, `.workflowExecutions`, `.threads`, `.messages`, i.e.
 * `POST /api/v1/<resource>/metrics`) with its calculation, granularity, column, dates and
 * filters, answered as a chart and as a table of the same numbers.
 *
 * The choices live in the address (`?resource=threads&calculation=time_series_count`), so a view
 * can be bookmarked. Answers come from the service's 5-minute metrics cache: the screen says when
 * the figures were computed. The charts' styles are imported here, so they load with this screen only.
 */
import '@mantine/charts/styles.css'
import '@mantine/dates/styles.css'
import { Alert, Text } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { useEffect, useRef, useState } from 'react'
import { useSearchParams } from 'react-router'
import { problemOf } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { otherIssues } from '../../ui/forms.ts'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { Empty, ErrorNotice, Loading } from '../../ui/states.tsx'
import { useMetric } from './api.ts'
import { MetricControls } from './MetricControls.tsx'
import { MetricResult } from './MetricResult.tsx'
import { CALCULATIONS, isAverage, isEmptyAnswer, readChoices, requestOf, RESOURCES, writeChoices, type MetricChoices } from './metrics-model.ts'
import { WorkspaceSummary } from './WorkspaceSummary.tsx'

/** The fields the controls show issues at; the rest of a 400 goes in one alert. */
const CONTROL_FIELDS = ['calculation', 'granularity', 'column', 'date_from', 'date_to', 'search', 'visibility', 'agent_uuid', 'thread_uuid', 'workflow_uuid']

export default function MetricsScreen() {
  const { me } = useSession()
  const [params, setParams] = useSearchParams()
  // The choices are state, mirrored into the address: several quick changes each build on the
  // last (a navigation per change would commit later, and a second change would undo the first).
  const [choices, setChoices] = useState(() => readChoices(params))
  const change = (next: Partial<MetricChoices>) => setChoices((current) => ({ ...current, ...next }))
  const [searchText, setSearchText] = useState(choices.search)
  const written = useRef(params.toString())
  useEffect(() => {
    const query = writeChoices(choices)
    if (query.toString() === written.current) return
    written.current = query.toString()
    setParams(query, { replace: true })
    // The address follows the choices alone.
  }, [choices])
  useEffect(() => {
    // The address changed from outside (a link, back): it wins.
    if (params.toString() === written.current) return
    written.current = params.toString()
    const read = readChoices(params)
    setChoices(read)
    setSearchText(read.search)
  }, [params])

  // The search reaches the choices (and the request) once typing pauses.
  const [debounced] = useDebouncedValue(searchText, 300)
  useEffect(() => {
    setChoices((current) => (current.search === debounced ? current : { ...current, search: debounced }))
  }, [debounced])

  const body = requestOf(choices, me.id)
  const metric = useMetric(choices.resource, body)
  const problem = metric.error ? problemOf(metric.error) : null
  const unclaimed = otherIssues(problem, CONTROL_FIELDS)
  const resource = RESOURCES[choices.resource]
  const calculation = CALCULATIONS.find((c) => c.value === choices.calculation)!.label
  const columnLabel = resource.columns.find((c) => c.value === choices.column)?.label.toLowerCase()
  const title = isAverage(choices.calculation)
    ? `${resource.label}: ${calculation.toLowerCase()} of ${columnLabel}`
    : `${resource.label}: ${calculation.toLowerCase()}${columnLabel ? ` (rows with ${columnLabel})` : ''}`

  return (
    <>
      <ScreenTitle title="Metrics" />
      <WorkspaceSummary />
      <section aria-labelledby="metric-explorer-title">
        <Text component="h3" fz="h4" fw={700} mb="xs" id="metric-explorer-title">
          Explore
        </Text>
        <MetricControls choices={choices} onChange={change} searchText={searchText} onSearchText={setSearchText} problem={problem} />
        {metric.isPending ? <Loading label="Computing" /> : null}
        {problem && problem.status === 400 ? (
          unclaimed.length ? (
            <Alert color="red" title="The service refused these choices" role="alert" my="sm">
              {unclaimed.join('; ')}
            </Alert>
          ) : null
        ) : metric.error ? (
          <ErrorNotice error={metric.error} onRetry={() => void metric.refetch()} />
        ) : null}
        {metric.data && !metric.error ? (
          isEmptyAnswer(choices.calculation, metric.data) ? (
            <Empty title="No data">No {resource.noun} matches these dates and filters yet.</Empty>
          ) : (
            <div style={{ opacity: metric.isPlaceholderData ? 0.6 : 1 }} aria-busy={metric.isPlaceholderData}>
              <MetricResult answer={metric.data} calculation={choices.calculation} granularity={choices.granularity} title={title} />
            </div>
          )
        ) : null}
        {metric.data && !metric.error ? (
          <Text size="xs" c="dimmed" mt="xs">
            Computed {new Date(metric.data.cached_at).toLocaleString()}; answers are kept for 5 minutes, so recent changes may take that long to show.
          </Text>
        ) : null}
      </section>
    </>
  )
}
