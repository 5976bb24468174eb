import type { IncomingMessage, ServerResponse } from 'node:http';
import { rm } from 'node:fs/promises';
import type { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { ControlPlane } from '../../deploy/control-plane/control-plane.js';
import { AnvilError, Errors } from '../../shared/errors.js';
import type { DeployResult } from '../../deploy/publish/deploy.js';
import type { ApiDirectory } from '../scheduling/api-directory.js';
import { sendError, sendJson } from '../edge/http-response.js';
import { readBody } from '../../shared/http/body.js';
import { serveOpenApi } from './openapi-endpoint.js';
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
  /** Records a deploy, update or delete (its outcome included) in the audit log. */
  note: NoteAction;
  /** Told of every deploy's and release change's result (metrics). */
  counted?: ManagementCounts;
}

export interface ManagementCounts {
  deploy(host: string, ok: boolean, status: number): void;
  releaseChange(host: string, key: string, change: ReleaseChange, result: 'ok' | 'unknown_api' | 'unknown_release'): void;
}

const API_KEY = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * The management API of SPEC §6, for one public host (already authenticated): list, read, update
 * (publish, disable, rollback), deploy and delete APIs. `path` is the part after `/anvil`.
 */
export async function handleManagement(req: IncomingMessage, res: ServerResponse, path: string, host: PublicHost, deps: ManagementDeps): Promise<void> {
  try {
    await route(req, res, path, host, deps);
  } catch (error) {
    // Meant for the operator, so said in full: the 503 names the control plane, the APIs keep serving.
    if (!(error instanceof AnvilError) || error.code !== Errors.controlPlaneUnavailable.code || res.headersSent) throw error;
    sendError(res, error.status, error.message, { 'retry-after': '5' });
  }
}

async function route(req: IncomingMessage, res: ServerResponse, path: string, host: PublicHost, deps: ManagementDeps): Promise<void> {
  const method = req.method ?? 'GET';
  const segments = path.split('/').filter((s) => s !== '');
  if (segments[0] !== 'api' || segments.length > 3) return sendError(res, 404, 'Not Found');
  const key = segments[1];
  if (segments.length === 3) return subResource(res, method, host, key!, segments[2]!, deps);

  if (key === undefined) {
    if (method === 'GET') return sendJson(res, 200, deps.registry.listApiKeys(host.name));
    if (method === 'POST') return deploy(req, res, host, deps);
    return sendError(res, 405, 'Method Not Allowed', { allow: 'GET, POST' });
  }
  if (!API_KEY.test(key)) return sendError(res, 404, `unknown API "${key}"`);
  if (method === 'GET') {
    const record = deps.registry.getApi(host.name, key);
    return record === null ? sendError(res, 404, `unknown API "${key}"`) : sendJson(res, 200, record);
  }
  if (method === 'PUT') return update(req, res, host, key, deps);
  if (method === 'DELETE') return remove(res, host, key, deps);
  return sendError(res, 405, 'Method Not Allowed', { allow: 'GET, PUT, DELETE' });
}

/** `/anvil/api/<key>/<what>`: what the management API tells of an API besides its record. */
function subResource(res: ServerResponse, method: string, host: PublicHost, key: string, what: string, deps: ManagementDeps): Promise<void> | void {
  if (!API_KEY.test(key) || what !== 'openapi.json') return sendError(res, 404, 'Not Found');
  if (method !== 'GET') return sendError(res, 405, 'Method Not Allowed', { allow: 'GET' });
  return serveOpenApi(res, host, key, deps);
}

async function deploy(req: IncomingMessage, res: ServerResponse, host: PublicHost, deps: ManagementDeps): Promise<void> {
  let result: DeployResult;
  try {
    result = await deps.deployUpload(req, host);
  } catch (error) {
    // Answered by the front door (a full disk's 507, say); recorded here.
    const status = (error as { status?: number }).status ?? 500;
    deps.counted?.deploy(host.name, false, status);
    await deps.note({ action: 'deploy', status, error: (error as Error).message });
    throw error;
  }
  deps.counted?.deploy(host.name, result.ok, result.ok ? 201 : result.status);
  if (!result.ok) {
    const summary = result.errors.length === 1 ? result.errors[0]! : `${result.errors.length} errors: ${result.errors.join('; ')}`;
    await deps.note({ action: 'deploy', status: result.status, error: summary });
    if (result.status === 429) return sendJson(res, 429, { error: summary, errors: result.errors, code: result.code }, { 'retry-after': String(result.retryAfterSeconds) });
    return sendJson(res, result.status, { error: summary, errors: result.errors });
  }
  deps.directory.reload();
  await deps.note({ action: 'deploy', api: result.key, release: result.release, status: 201 });
  sendJson(res, 201, { key: result.key, release: result.release });
}

async function update(req: IncomingMessage, res: ServerResponse, host: PublicHost, key: string, deps: ManagementDeps): Promise<void> {
  const refuse = async (status: number, error: string, answer?: Record<string, unknown>) => {
    await deps.note({ action: 'update', api: key, status, error });
    sendJson(res, status, answer ?? { error });
  };
  let body: unknown;
  try {
    const raw = await readBody(req, 64 * 1024);
    body = raw === null ? undefined : JSON.parse(raw.toString('utf8'));
  } catch (error) {
    const status = (error as { status?: number }).status === 413 ? 413 : 400;
    return refuse(status, status === 413 ? 'body too large' : 'body is not valid JSON');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return refuse(400, 'body must be a JSON object {"active": boolean, "release": string, "public": boolean}');
  }
  const fields = body as Record<string, unknown>;
  const problems: string[] = [];
  for (const [field, type] of [['active', 'boolean'], ['release', 'string'], ['public', 'boolean']] as const) {
    if (!(field in fields)) problems.push(`field "${field}" is missing (a ${type})`);
    else if (typeof fields[field] !== type) problems.push(`field "${field}" must be a ${type}, got ${JSON.stringify(fields[field])}`);
  }
  if (problems.length > 0) return refuse(400, problems.join('; '), { error: problems.join('; '), errors: problems });

  const change = { active: fields.active as boolean, release: fields.release as string, public: fields.public as boolean };
  const before = deps.registry.getApi(host.name, key);
  const kind = releaseChange(before, change);
  const outcome = await deps.controlPlane.updateApi(host.name, key, change);
  deps.counted?.releaseChange(host.name, key, kind, outcome === 'ok' ? 'ok' : outcome === 'unknown-api' ? 'unknown_api' : 'unknown_release');
  const note = { action: kind, api: key, release: change.release, detail: { ...change, previousRelease: before?.release ?? null } };
  const failure = outcome === 'unknown-api' ? `unknown API "${key}"` : outcome === 'unknown-release' ? `unknown release "${change.release}" of API "${key}"` : null;
  if (failure !== null) {
    await deps.note({ ...note, status: 404, error: failure });
    return sendError(res, 404, failure);
  }
  deps.directory.reload();
  await deps.note({ ...note, status: 204 });
  res.writeHead(204).end();
}

async function remove(res: ServerResponse, host: PublicHost, key: string, deps: ManagementDeps): Promise<void> {
  const release = deps.registry.getApi(host.name, key)?.release ?? null;
  const outcome = await deps.controlPlane.deleteApi(host.name, key);
  const refusal = deleteRefusal(outcome, key);
  await deps.note({ action: 'delete', api: key, release, status: refusal?.status ?? 204, ...(refusal === null ? {} : { error: refusal.error }) });
  if (refusal !== null) return sendError(res, refusal.status, refusal.error);
  deps.retireApi(host.name, key);
  deps.directory.reload();
  await rm(deps.paths.apiReleasesDir(host.name, key), { recursive: true, force: true });
  await rm(deps.paths.apiDataDir(host.name, host.env, key), { recursive: true, force: true });
  res.writeHead(204).end();
}

function deleteRefusal(outcome: DeleteApiResult, key: string): { status: number; error: string } | null {
  if (outcome.status === 'unknown-api') return { status: 404, error: `unknown API "${key}"` };
  if (outcome.status === 'active') return { status: 409, error: `API "${key}" is active: disable it first (PUT {"active": false, …})` };
  return null;
}
