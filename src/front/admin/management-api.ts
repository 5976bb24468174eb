import type { IncomingMessage } from 'node:http';
import { rm } from 'node:fs/promises';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { ControlPlane } from '../../deploy/control-plane/control-plane.js';
import { errorBody, Errors, type AnvilError } from '../../shared/errors.js';
import type { DeployResult } from '../../deploy/publish/deploy.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import { readBody } from '../../shared/http/body.js';
import { openApiOf } from './openapi-endpoint.js';
import type { AdminAnswer, HostCall } from './admin-router.js';
import { type NoteAction } from '../audit/management-audit.js';
import type { DeleteApiResult, PublicHost, Registry } from '../../deploy/registry/registry.js';
import { releaseChange, type ReleaseChange } from '../../deploy/registry/release-change.js';

export interface ManagementDeps {
  /** Reads: the local registry (a replica in cluster mode). */
  registry: Registry;
  /** Writes: through the control plane (local, or Postgres in cluster mode). */
  controlPlane: ControlPlane;
  directory: ApiDirectory;
  paths: DataPaths;
  /** Receives an uploaded archive and deploys it into the host (unpacked and validated in the deploy worker). */
  deployUpload(req: IncomingMessage, host: PublicHost): Promise<DeployResult>;
  /** The API's actors stop taking work (before its data is deleted). */
  retireApi(host: string, key: string): void;
  /** Records a deploy, update or delete (its outcome included) in the audit log, as the request's caller. */
  note(req: IncomingMessage, host: PublicHost): NoteAction;
  /** Told of every deploy's and release change's result (metrics). */
  counted?: ManagementCounts;
}

export interface ManagementCounts {
  deploy(host: string, ok: boolean, status: number): void;
  releaseChange(
    host: string,
    key: string,
    change: ReleaseChange,
    result: 'ok' | 'unknown_api' | 'unknown_release',
  ): void;
}

/**
 * The management API of SPEC §6, for one public host (already authenticated): list, read, update
 * (publish, disable, rollback), deploy and delete APIs, and describe one (OpenAPI).
 */
export function managementHandlers(deps: ManagementDeps) {
  return {
    listApis: ({ host }: HostCall): AdminAnswer => ({ body: deps.registry.listApiKeys(host.name) }),
    deploy: ({ req, host }: HostCall) => deploy(req, host, deps),
    readApi: ({ host, params }: HostCall): AdminAnswer => {
      const record = deps.registry.getApi(host.name, params.key!);
      if (record === null) throw Errors.unknownApi(params.key!);
      return { body: record };
    },
    updateApi: ({ req, host, params }: HostCall) => update(req, host, params.key!, deps),
    deleteApi: ({ req, host, params }: HostCall) => remove(host, params.key!, deps, deps.note(req, host)),
    openApi: async ({ host, params }: HostCall): Promise<AdminAnswer> => ({
      body: await openApiOf(host, params.key!, deps),
    }),
  };
}

async function deploy(req: IncomingMessage, host: PublicHost, deps: ManagementDeps): Promise<AdminAnswer> {
  const note = deps.note(req, host);
  let result: DeployResult;
  try {
    result = await deps.deployUpload(req, host);
  } catch (error) {
    // Answered by the admin router (a full disk's 507, say); recorded here.
    const status = (error as { status?: number }).status ?? 500;
    deps.counted?.deploy(host.name, false, status);
    await note({ action: 'deploy', status, error: (error as Error).message });
    throw error;
  }
  deps.counted?.deploy(host.name, result.ok, result.ok ? 201 : result.status);
  if (!result.ok) {
    const summary =
      result.errors.length === 1 ? result.errors[0]! : `${result.errors.length} errors: ${result.errors.join('; ')}`;
    await note({ action: 'deploy', status: result.status, error: summary });
    const code = result.status === 429 ? result.code : Errors.deployRefused.code;
    const headers: Record<string, string> =
      result.status === 429 ? { 'retry-after': String(result.retryAfterSeconds) } : {};
    return {
      status: result.status,
      body: errorBody({ status: result.status, message: summary, code }, { errors: result.errors }),
      headers,
    };
  }
  deps.directory.reload();
  await note({ action: 'deploy', api: result.key, release: result.release, status: 201 });
  return { status: 201, body: { key: result.key, release: result.release } };
}

async function update(req: IncomingMessage, host: PublicHost, key: string, deps: ManagementDeps): Promise<AdminAnswer> {
  const note = deps.note(req, host);
  const refuse = async (error: AnvilError, errors?: string[]): Promise<AdminAnswer> => {
    await note({ action: 'update', api: key, status: error.status, error: error.message });
    return {
      status: error.status,
      body: errorBody(error, errors === undefined ? {} : { errors }),
    };
  };
  let body: unknown;
  try {
    const raw = await readBody(req, 64 * 1024);
    body = raw === null ? undefined : JSON.parse(raw.toString('utf8'));
  } catch (error) {
    return refuse(
      (error as { status?: number }).status === 413
        ? Errors.managementBodyTooLarge()
        : Errors.badManagementBody('body is not valid JSON'),
    );
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return refuse(
      Errors.badManagementBody('body must be a JSON object {"active": boolean, "release": string, "public": boolean}'),
    );
  }
  const fields = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const [field, type] of [
    ['active', 'boolean'],
    ['release', 'string'],
    ['public', 'boolean'],
  ] as const) {
    if (!(field in fields)) problems.push(`field "${field}" is missing (a ${type})`);
    else if (typeof fields[field] !== type)
      problems.push(`field "${field}" must be a ${type}, got ${JSON.stringify(fields[field])}`);
  }
  if (problems.length > 0) return refuse(Errors.badManagementBody(problems.join('; ')), problems);

  const change = {
    active: fields.active as boolean,
    release: fields.release as string,
    public: fields.public as boolean,
  };
  const before = deps.registry.getApi(host.name, key);
  const kind = releaseChange(before, change);
  const outcome = await deps.controlPlane.updateApi(host.name, key, change);
  deps.counted?.releaseChange(
    host.name,
    key,
    kind,
    outcome === 'ok' ? 'ok' : outcome === 'unknown-api' ? 'unknown_api' : 'unknown_release',
  );
  const entry = {
    action: kind,
    api: key,
    release: change.release,
    detail: { ...change, previousRelease: before?.release ?? null },
  };
  const failure =
    outcome === 'unknown-api'
      ? Errors.unknownApi(key)
      : outcome === 'unknown-release'
        ? Errors.unknownRelease(change.release, key)
        : null;
  if (failure !== null) {
    await note({ ...entry, status: failure.status, error: failure.message });
    throw failure;
  }
  deps.directory.reload();
  await note({ ...entry, status: 204 });
  return { status: 204 };
}

async function remove(host: PublicHost, key: string, deps: ManagementDeps, note: NoteAction): Promise<AdminAnswer> {
  const release = deps.registry.getApi(host.name, key)?.release ?? null;
  const outcome = await deps.controlPlane.deleteApi(host.name, key);
  const refusal = deleteRefusal(outcome, key);
  await note({
    action: 'delete',
    api: key,
    release,
    status: refusal?.status ?? 204,
    ...(refusal === null ? {} : { error: refusal.message }),
  });
  if (refusal !== null) throw refusal;
  deps.retireApi(host.name, key);
  deps.directory.reload();
  await rm(deps.paths.apiReleasesDir(host.name, key), { recursive: true, force: true });
  await rm(deps.paths.apiDataDir(host.name, host.env, key), { recursive: true, force: true });
  return { status: 204 };
}

function deleteRefusal(outcome: DeleteApiResult, key: string): AnvilError | null {
  if (outcome.status === 'unknown-api') return Errors.unknownApi(key);
  if (outcome.status === 'active') return Errors.apiActive(key);
  return null;
}
