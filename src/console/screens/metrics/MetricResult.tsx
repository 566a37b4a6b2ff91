/**
 * One metrics answer, shown twice: as a chart (bars for counts, a line for averages, a single
 * figure for the accumulated calculations) and as a table of the same numbers, which is what a
 * screen reader reads (the chart is one labelled image) and what anyone can copy.
 */
import { BarChart, LineChart } from '@mantine/charts'
import { Box, Group, Paper, Table, Text } from '@mantine/core'
import { formatValue, isAverage, isSeries, periodLabel, type Calculation, type Granularity, type MetricsAnswer } from './metrics-model.ts'

interface Props {
  answer: MetricsAnswer
  calculation: Calculation
  granularity: Granularity
  /** What is measured, for the caption: "Threads, average of messages per thread". */
  title: string
}

export function MetricResult({ answer, calculation, granularity, title }: Props) {
  return (
    <>
      {isSeries(calculation) ? (
        <SeriesChart answer={answer} calculation={calculation} granularity={granularity} title={title} />
      ) : (
        <Paper withBorder p="md" mb="md" radius="md">
          <Text size="sm" c="dimmed">
            {title}
          </Text>
          <Text fz={36} fw={700} lh={1.2}>
            {formatValue(answer.total)}
          </Text>
          {isAverage(calculation) ? (
            <Text size="sm" c="dimmed">
              over {formatValue(answer.data[0]?.count ?? 0)} records
            </Text>
          ) : null}
        </Paper>
      )}
      <MetricTable answer={answer} calculation={calculation} granularity={granularity} title={title} />
    </>
  )
}

function SeriesChart({ answer, calculation, granularity, title }: Props) {
  const data = answer.data.map((point) => ({ period: periodLabel(point.date ?? '', granularity), value: point.value }))
  const series = [{ name: 'value', label: isAverage(calculation) ? 'Average' : 'Count', color: 'blue.6' }]
  const common = {
    h: 280,
    data,
    dataKey: 'period',
    series,
    valueFormatter: (value: number) => formatValue(value),
    tickLine: 'y' as const,
    // Counts are whole numbers: no 0.25 ticks on their axis.
    yAxisProps: { allowDecimals: isAverage(calculation) },
  }
  return (
    <Paper withBorder p="md" mb="md" radius="md">
      <Group justify="space-between" mb="xs" wrap="wrap">
        <Text size="sm" c="dimmed">
          {title}
        </Text>
        <Text size="sm">
          {isAverage(calculation) ? 'Overall average' : 'Total'}: <b>{formatValue(answer.total)}</b>
        </Text>
      </Group>
      {/* The table under the chart lists every point: to assistive technology the chart is one labelled image. */}
      <Box role="img" aria-label={`Chart of ${title}; the table below lists the same numbers.`}>
        {isAverage(calculation) ? <LineChart {...common} connectNulls={false} curveType="linear" /> : <BarChart {...common} />}
      </Box>
    </Paper>
  )
}

/** The numbers of the answer: one row per period (or the one value), with the total last. */
function MetricTable({ answer, calculation, granularity, title }: Props) {
  const average = isAverage(calculation)
  const series = isSeries(calculation)
  return (
    <Table.ScrollContainer minWidth={300}>
      <Table striped withTableBorder aria-label="Metric values">
        <Table.Caption style={{ captionSide: 'top', textAlign: 'left' }}>{title}</Table.Caption>
        <Table.Thead>
          <Table.Tr>
            <Table.Th scope="col">{series ? 'Period' : 'Measure'}</Table.Th>
            <Table.Th scope="col" ta="right">
              {average ? 'Average' : 'Count'}
            </Table.Th>
            {average ? (
              <Table.Th scope="col" ta="right">
                Records averaged
              </Table.Th>
            ) : null}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {answer.data.map((point, index) => (
            <Table.Tr key={point.date ?? index}>
              <Table.Th scope="row" fw={400}>
                {point.date ? <time dateTime={point.date}>{periodLabel(point.date, granularity)}</time> : average ? 'Average' : 'Count'}
              </Table.Th>
              <Table.Td ta="right">
                {formatValue(point.value)}
              </Table.Td>
              {average ? (
                <Table.Td ta="right">
                  {formatValue(point.count)}
                </Table.Td>
              ) : null}
            </Table.Tr>
          ))}
        </Table.Tbody>
        {series ? (
          <Table.Tfoot>
            <Table.Tr>
              <Table.Th scope="row">{average ? 'Overall average' : 'Total'}</Table.Th>
              <Table.Td ta="right" fw={700}>
                {formatValue(answer.total)}
              </Table.Td>
              {average ? <Table.Td ta="right">{formatValue(answer.data.reduce((sum, point) => sum + (point.count ?? 0), 0))}</Table.Td> : null}
            </Table.Tr>
          </Table.Tfoot>
        ) : null}
      </Table>
    </Table.ScrollContainer>
  )
}
