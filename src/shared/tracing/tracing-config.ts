/**
 * Whether spans are exported, read once per process from the standard OpenTelemetry variables.
 * Off unless an OTLP endpoint is set: then nothing of OpenTelemetry is even loaded.
 */

export interface TracingConfig {
  /** OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT set, and OTEL_SDK_DISABLED not `true`. */
  enabled: boolean;
  /** Where spans go, for the instance's log (the exporter reads the variables itself). */
  endpoint: string;
  /** OTEL_SERVICE_NAME, default `anvil`. */
  serviceName: string;
  /** The batch span processor's settings (OTEL_BSP_*); the queue is bounded: spans past it are dropped. */
  scheduleDelayMs: number;
  maxQueueSize: number;
  maxExportBatchSize: number;
  exportTimeoutMs: number;
  /** OTEL_TRACES_SAMPLER (default `parentbased_always_on`) and its OTEL_TRACES_SAMPLER_ARG, the ratio of the `traceidratio` ones (default 1). */
  sampler: SamplerName;
  samplerRatio: number;
  /** Variables that were set but not usable (their defaults apply), for the instance's log. */
  problems: string[];
}

type Env = Readonly<Record<string, string | undefined>>;

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

export function tracingConfig(env: Env = process.env): TracingConfig {
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const endpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const disabled = env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true';
  const problems: string[] = [];
  const config: TracingConfig = {
    enabled: !disabled && (tracesEndpoint !== undefined || endpoint !== undefined),
    endpoint: tracesEndpoint ?? (endpoint === undefined ? '' : `${endpoint.replace(/\/+$/, '')}/v1/traces`),
    serviceName: nonEmpty(env.OTEL_SERVICE_NAME) ?? 'anvil',
    scheduleDelayMs: positiveInteger(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, problems),
    maxQueueSize: positiveInteger(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2_048, problems),
    maxExportBatchSize: positiveInteger(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, problems),
    exportTimeoutMs: positiveInteger(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, problems),
    sampler: samplerName(env, problems),
    samplerRatio: ratio(env, problems),
    problems,
  };
  config.maxExportBatchSize = Math.min(config.maxExportBatchSize, config.maxQueueSize);
  return config;
}

function samplerName(env: Env, problems: string[]): SamplerName {
  const text = nonEmpty(env.OTEL_TRACES_SAMPLER)?.toLowerCase();
  if (text === undefined) return 'parentbased_always_on';
  if ((SAMPLERS as readonly string[]).includes(text)) return text as SamplerName;
  problems.push(
    `OTEL_TRACES_SAMPLER=${JSON.stringify(text)} is not one of ${SAMPLERS.join(', ')}: parentbased_always_on is used`,
  );
  return 'parentbased_always_on';
}

function ratio(env: Env, problems: string[]): number {
  const text = nonEmpty(env.OTEL_TRACES_SAMPLER_ARG);
  if (text === undefined) return 1;
  const value = Number(text);
  if (Number.isFinite(value) && value >= 0 && value <= 1) return value;
  problems.push(`OTEL_TRACES_SAMPLER_ARG=${JSON.stringify(text)} is not a ratio between 0 and 1: 1 is used`);
  return 1;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}

function positiveInteger(env: Env, name: string, fallback: number, problems: string[]): number {
  const text = nonEmpty(env[name]);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (Number.isInteger(value) && value > 0) return value;
  problems.push(`${name}=${JSON.stringify(text)} is not a positive integer: ${fallback} is used`);
  return fallback;
}

/**
 * The environment an actor thread starts with: empty (threads get none of the instance's), but the
 * OTEL_* variables when tracing is on, which the thread's exporter reads (endpoint, headers, timeout…).
 */
export function threadEnvironment(env: Env = process.env): Record<string, string> {
  if (!tracingConfig(env).enabled) return {};
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (name.startsWith('OTEL_') && value !== undefined) out[name] = value;
  return out;
}
