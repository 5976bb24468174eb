import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PublicHost } from '../../deploy/registry/registry.js';
import { sendError, sendJson } from '../edge/http-response.js';
import { apiWindow, covered, isWindowName, routeWindows, secondSeries, WINDOWS } from '../meters/live-windows.js';
import { overview, type OperatorSources } from './overview.js';

const STATS_PATH = /^\/api\/([^/]+)\/stats$/;
const ALLOWED_WINDOWS = Object.keys(WINDOWS).join(', ');

/**
 * The operator endpoints on the admin host (already authenticated, for one public host):
 * `GET /anvil/overview` and `GET /anvil/api/<key>/stats?window=1m|5m`, from the router's rolling
 * windows. Returns null when `path` (the part after `/anvil`) is not one of them.
 */
export function handleOperator(req: IncomingMessage, res: ServerResponse, path: string, host: PublicHost, sources: OperatorSources): Promise<void> | null {
  const stats = STATS_PATH.exec(path);
  if (path !== '/overview' && stats === null) return null;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendError(res, 405, 'Method Not Allowed', { allow: 'GET' });
    return Promise.resolve();
  }
  if (stats === null) return overview(sources, host).then((body) => sendJson(res, 200, body, NO_STORE));
  apiStats(res, host, stats[1]!, new URLSearchParams(queryOf(req.url)).get('window'), sources);
  return Promise.resolve();
}

const NO_STORE = { 'cache-control': 'no-store' };

function apiStats(res: ServerResponse, host: PublicHost, key: string, window: string | null, sources: OperatorSources): void {
  const entry = sources.directory.api(host.name, key);
  if (entry === undefined) return sendError(res, 404, `unknown API "${key}" on host ${host.name}`);
  const name = window ?? '1m';
  if (!isWindowName(name)) return sendError(res, 400, `window must be one of ${ALLOWED_WINDOWS}, got "${name}"`);
  const seconds = WINDOWS[name];
  const now = sources.live.now();
  const span = covered(seconds, Math.floor((Date.now() - sources.startedAt) / 1000));
  const rings = sources.live.of(host.name, key);
  sendJson(
    res,
    200,
    {
      key,
      host: host.name,
      release: entry.record.release,
      window: name,
      windowSeconds: seconds,
      totals: apiWindow(rings, now, seconds, span),
      routes: routeWindows(rings, now, seconds, span),
      series: { stepSeconds: 1, ...secondSeries(rings, now) },
    },
    NO_STORE,
  );
}

function queryOf(url: string | undefined): string {
  const at = url?.indexOf('?') ?? -1;
  return at < 0 ? '' : url!.slice(at + 1);
}
