import { Errors } from '../../shared/errors.js';
import type { PublicHost } from '../../deploy/registry/registry.js';
import type { AdminAnswer, HostCall } from './admin-router.js';
import { apiWindow, covered, isWindowName, routeWindows, secondSeries, WINDOWS } from '../meters/live-windows.js';
import { overview, type OperatorSources } from './overview.js';

const ALLOWED_WINDOWS = Object.keys(WINDOWS).join(', ');

/**
 * The operator endpoints on the admin host (already authenticated, for one public host):
 * `GET /anvil/overview` and `GET /anvil/api/<key>/stats?window=1m|5m`, from the router's rolling
 * windows.
 */
export function operatorHandlers(sources: OperatorSources) {
  return {
    overview: async ({ host }: HostCall): Promise<AdminAnswer> => ({
      body: await overview(sources, host),
      headers: NO_STORE,
    }),
    stats: ({ host, params, query }: HostCall): AdminAnswer =>
      apiStats(host, params.key!, query.get('window'), sources),
  };
}

const NO_STORE = { 'cache-control': 'no-store' };

function apiStats(host: PublicHost, key: string, window: string | null, sources: OperatorSources): AdminAnswer {
  const entry = sources.directory.api(host.name, key);
  if (entry === undefined) throw Errors.unknownApi(key);
  const name = window ?? '1m';
  if (!isWindowName(name)) throw Errors.badQuery(`window must be one of ${ALLOWED_WINDOWS}, got "${name}"`);
  const seconds = WINDOWS[name];
  const now = sources.live.now();
  const span = covered(seconds, Math.floor((Date.now() - sources.startedAt) / 1000));
  const rings = sources.live.of(host.name, key);
  return {
    body: {
      key,
      host: host.name,
      release: entry.record.release,
      window: name,
      windowSeconds: seconds,
      totals: apiWindow(rings, now, seconds, span),
      routes: routeWindows(rings, now, seconds, span),
      series: { stepSeconds: 1, ...secondSeries(rings, now) },
    },
    headers: NO_STORE,
  };
}
