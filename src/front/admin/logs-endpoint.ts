import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendError, sendJson } from '../edge/http-response.js';
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
export async function handleLogs(req: IncomingMessage, res: ServerResponse, params: URLSearchParams, key: string, dir: string, followers: LogFollowers): Promise<void> {
  if (req.method !== 'GET') return sendError(res, 405, 'Method Not Allowed', { allow: 'GET' });
  for (const name of params.keys()) {
    if (!PARAMETERS.includes(name)) return sendError(res, 400, `unknown parameter "${name}" (${PARAMETERS.join(', ')})`);
  }
  const filter = parseLogFilter(params);
  if (typeof filter === 'string') return sendError(res, 400, filter);
  const follow = params.get('follow');
  if (follow !== null && follow !== '0' && follow !== '1') return sendError(res, 400, `follow: "${follow}" is not 1 or 0`);
  if (follow === '1') {
    if (params.has('limit')) return sendError(res, 400, 'limit: only without follow=1 (the last lines as JSON)');
    if (!(await followers.follow(dir, res, filter))) {
      return sendError(res, 429, `the request log of "${key}" has as many followers as it may have: try again when one has left`, { 'retry-after': '5' });
    }
    return;
  }
  const limitText = params.get('limit');
  const limit = limitText === null ? RECENT_LINES_DEFAULT : Number(limitText);
  if (limitText !== null && (!/^\d{1,5}$/.test(limitText) || limit < 1 || limit > RECENT_LINES_MAX)) {
    return sendError(res, 400, `limit: "${limitText}" is not a whole number from 1 to ${RECENT_LINES_MAX}`);
  }
  const lines = await recentLines(dir, filter, limit);
  sendJson(res, 200, { lines: lines.map(parseLine) });
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return { unreadable: line.slice(0, 1024) };
  }
}
