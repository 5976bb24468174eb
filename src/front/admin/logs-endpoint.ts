import type { ServerResponse } from 'node:http';
import { Errors } from '../../shared/errors.js';
import type { AdminAnswer } from './admin-router.js';
import { parseLogFilter } from '../../shared/logs/follow/log-filter.js';
import type { LogFollowers } from '../../shared/logs/follow/log-followers.js';
import { recentLines } from '../../shared/logs/follow/recent-lines.js';

export const RECENT_LINES_DEFAULT = 100;
export const RECENT_LINES_MAX = 1000;
const PARAMETERS = ['follow', 'status', 'route', 'text', 'limit'];

/**
 * `GET /anvil/api/<key>/logs` on the admin host: the API's last request log lines as JSON
 * (`{"lines": […]}`, oldest first), or with `follow=1` its new lines live as Server-Sent Events.
 * Filters: `status` (`5xx` or `503`), `route`, `text`. `dir` is the API's log folder.
 */
export async function apiLogs(
  res: ServerResponse,
  params: URLSearchParams,
  key: string,
  dir: string,
  followers: LogFollowers,
): Promise<AdminAnswer | void> {
  for (const name of params.keys()) {
    if (!PARAMETERS.includes(name)) throw Errors.badQuery(`unknown parameter "${name}" (${PARAMETERS.join(', ')})`);
  }
  const filter = parseLogFilter(params);
  if (typeof filter === 'string') throw Errors.badQuery(filter);
  const follow = params.get('follow');
  if (follow !== null && follow !== '0' && follow !== '1') throw Errors.badQuery(`follow: "${follow}" is not 1 or 0`);
  if (follow === '1') {
    if (params.has('limit')) throw Errors.badQuery('limit: only without follow=1 (the last lines as JSON)');
    if (!(await followers.follow(dir, res, filter))) throw Errors.logFollowersFull(key);
    return;
  }
  const limitText = params.get('limit');
  const limit = limitText === null ? RECENT_LINES_DEFAULT : Number(limitText);
  if (limitText !== null && (!/^\d{1,5}$/.test(limitText) || limit < 1 || limit > RECENT_LINES_MAX)) {
    throw Errors.badQuery(`limit: "${limitText}" is not a whole number from 1 to ${RECENT_LINES_MAX}`);
  }
  const lines = await recentLines(dir, filter, limit);
  return { body: { lines: lines.map(parseLine) } };
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return { unreadable: line.slice(0, 1024) };
  }
}
