/**
 * The Prometheus registry of this process (docs/operations.md, "Metrics"): every metric that
 * `GET /metrics` writes (src/http/prometheus.plugin.ts) is registered here, through
 * {@link counter}, {@link histogram} and {@link gauge}. It knows no capability: each one defines
 * its own metrics in its own folder (`src/runs/run-metrics.ts`, ...), the job queue's is
 * ./queue-metrics.ts.
 *
 * The helpers get or create: a name defined a second time answers the metric defined first
 * rather than prom-client's "already registered" error, so the same definition may be reached
 * again (a module evaluated anew, several runtimes in one test process).
 */
import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type CounterConfiguration,
  type GaugeConfiguration,
  type HistogramConfiguration,
} from 'prom-client'

/** The one registry of this process; `registry.metrics()` is the text `GET /metrics` answers. */
export const registry = new Registry()

/** A metric kind of prom-client (its class). */
type Kind<M> = abstract new (...args: never[]) => M

/**
 * The metric registered as `name`, if any.
 * @throws Error when it is of another kind than `kind` (two definitions disagree: a bug).
 */
function registered<M>(name: string, kind: Kind<M>): M | undefined {
  const found: unknown = registry.getSingleMetric(name)
  if (found === undefined) return undefined
  if (!(found instanceof kind)) throw new Error(`The metric ${name} is registered already, as another kind`)
  return found
}

/**
 * The counter `config.name` of this process's registry, created on first use. `zeroed` names a
 * label and its values: each of those series exists at 0 from the start, so a rate over one is
 * defined before its first event.
 */
export function counter<L extends string = string>(
  config: Omit<CounterConfiguration<L>, 'registers'>,
  zeroed?: { label: L; values: Iterable<string> },
): Counter<L> {
  const found = registered<Counter<L>>(config.name, Counter)
  if (found) return found
  const created = new Counter<L>({ ...config, registers: [registry] })
  for (const value of zeroed?.values ?? []) created.inc({ [zeroed!.label]: value } as Partial<Record<L, string>>, 0)
  return created
}

/** The histogram `config.name` of this process's registry (buckets as upper bounds in the metric's unit), created on first use. */
export function histogram<L extends string = string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
  return registered<Histogram<L>>(config.name, Histogram) ?? new Histogram<L>({ ...config, registers: [registry] })
}

/** The gauge `config.name` of this process's registry, created on first use; a `collect` runs at each scrape. */
export function gauge<L extends string = string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
  return registered<Gauge<L>>(config.name, Gauge) ?? new Gauge<L>({ ...config, registers: [registry] })
}

let processMetrics = false

/**
 * Adds prom-client's default metrics to the registry, once per process whatever the calls:
 * CPU, memory, heap, event loop lag, garbage collection, handles, open file descriptors, the
 * Node.js version. The HTTP host does so when it serves `GET /metrics`; a process that exposes
 * nothing (the worker) pays nothing for their monitors.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return
  processMetrics = true
  collectDefaultMetrics({ register: registry })
}
