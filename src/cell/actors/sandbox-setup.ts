import type { CompiledRelease, SandboxLimits } from '../../shared/api-model/types.js';
import { pgSandboxDatabase } from '../../directives/database/postgres/pg-request.js';
import { requestDatabase } from '../../directives/database/request-database.js';
import { sqlTimeMs } from '../../directives/database/sql-clock.js';
import { builtinDirectives } from '../../directives/catalogue.js';
import { Sandbox, type SandboxOptions } from '../sandbox-host/sandbox.js';

/** Limits an API gets when its api.yaml sets none (SPEC §10). */
export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = { memoryMb: 64, cpuMs: 50, wallMs: 10_000 };

/** The API's own limits (api.yaml `limits:`), each capped by the instance's maximum. */
export function effectiveLimits(requested: Partial<SandboxLimits>, maxima: SandboxLimits): SandboxLimits {
  const pick = (key: keyof SandboxLimits) => Math.min(requested[key] ?? DEFAULT_SANDBOX_LIMITS[key], maxima[key]);
  return { memoryMb: pick('memoryMb'), cpuMs: pick('cpuMs'), wallMs: pick('wallMs') };
}

/** The sandbox of a release with custom directives (null without any). */
export function createSandbox(
  release: CompiledRelease,
  maxima: SandboxLimits,
  report: SandboxOptions['report'],
  enter?: () => void,
): Sandbox | null {
  if (Object.keys(release.directiveCode ?? {}).length === 0) return null;
  return new Sandbox({
    limits: effectiveLimits(release.definition.limits ?? {}, maxima),
    directiveCode: release.directiveCode,
    directiveMaps: release.directiveMaps ?? {},
    services: {
      builtin: (name) => builtinDirectives.get(name),
      database: (ctx) => (ctx.api.database.mode === 'postgres' ? pgSandboxDatabase(ctx) : requestDatabase(ctx)),
    },
    report,
    enter,
    hostWorkMs: sqlTimeMs,
  });
}
