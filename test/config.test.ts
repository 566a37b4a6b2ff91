import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/platform/config.ts'

const dataDir = () => mkdtempSync(path.join(tmpdir(), 'aw-config-'))

describe('loadConfig (docs/api/conventions.md, configuration)', () => {
  it('starts with no variables at all: embedded mode, port 3000, generated APP_KEY in DATA_DIR', () => {
    const dir = dataDir()
    const config = loadConfig({ DATA_DIR: dir })
    expect(config.port).toBe(3000)
    expect(config.host).toBe('127.0.0.1')
    expect(config.databaseUrl).toBeUndefined()
    expect(config.appKey).toHaveLength(32)
    expect(readFileSync(path.join(dir, 'app.key'), 'utf8')).toMatch(/^base64:[A-Za-z0-9+/]{43}=\n$/)
    // the key is stable across starts
    expect(loadConfig({ DATA_DIR: dir }).appKey.equals(config.appKey)).toBe(true)
    expect(config.appUrl).toBe('http://127.0.0.1:3000')
  })

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://localhost/x' }, 'DATABASE_URL'],
    [{ REDIS_URL: 'http://localhost' }, 'REDIS_URL'],
    [{ APP_KEY: 'short' }, 'APP_KEY'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ SIGN_UP_ENABLED: 'maybe' }, 'SIGN_UP_ENABLED'],
    [{ SERVICE_KEYS: 'acme' }, 'SERVICE_KEYS'],
    [{ SERVICE_KEYS: 'acme:short' }, 'SERVICE_KEYS'],
    [{ DATABASE_URL: 'postgres://localhost/x' }, 'APP_KEY'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL'],
    [{ OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'yes' }, 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT'],
  ])('stops on %j naming %s', (env, variable) => {
    expect(() => loadConfig({ DATA_DIR: dataDir(), ...env })).toThrow(ConfigError)
    expect(() => loadConfig({ DATA_DIR: dataDir(), ...env })).toThrow(new RegExp(`^${variable}:`))
  })

  it('reads tracing from the standard OpenTelemetry variables (docs/operations.md, "Traces")', () => {
    expect(loadConfig({ DATA_DIR: dataDir() }).tracing).toBeNull()
    const on = loadConfig({ DATA_DIR: dataDir(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing
    expect(on).toMatchObject({ url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf', sampler: 'parentbased_always_on', samplerRatio: 1, captureMessageContent: false })
    const traces = loadConfig({
      DATA_DIR: dataDir(),
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://tempo.example/otlp/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing
    expect(traces).toMatchObject({ url: 'https://tempo.example/otlp/traces', protocol: 'http/json', sampler: 'parentbased_traceidratio', samplerRatio: 0.25 })
    expect(loadConfig({ DATA_DIR: dataDir(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull()
    expect(loadConfig({ DATA_DIR: dataDir(), OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeNull()
  })

  it('never echoes a secret value in its message', () => {
    const secret = 'acme:tooshort'
    try {
      loadConfig({ DATA_DIR: dataDir(), SERVICE_KEYS: secret })
      expect.unreachable()
    } catch (error) {
      expect(String(error)).not.toContain('tooshort')
    }
  })

  it('parses service keys into key -> service_id', () => {
    const config = loadConfig({ DATA_DIR: dataDir(), SERVICE_KEYS: 'acme:0123456789abcdef, globex:fedcba9876543210' })
    expect([...config.serviceKeys]).toEqual([
      ['0123456789abcdef', 'acme'],
      ['fedcba9876543210', 'globex'],
    ])
  })
})
