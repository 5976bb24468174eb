import type { InstanceLog } from '../logs/instance-log.js';
import { tracingConfig } from './tracing-config.js';

/** One line at start when tracing is on (where spans go), and one per OTEL_BSP_* or sampler value not used. */
export function logTracing(log: InstanceLog, env: NodeJS.ProcessEnv = process.env): void {
  const config = tracingConfig(env);
  if (!config.enabled) return;
  log.info(
    { endpoint: config.endpoint, serviceName: config.serviceName },
    'tracing on: spans are exported with OTLP/HTTP (JSON)',
  );
  for (const problem of config.problems) log.warn({ problem }, 'tracing: a setting is not usable, its default applies');
}
