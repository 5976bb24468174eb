/**
 * Which request log lines a reader wants: `status=5xx` (a class) or `status=503`, `route=get /users/{id}`
 * (the route template, as the line has it), `text=…` (anywhere in the line, any case).
 */
export interface LogFilter {
  matches(line: string): boolean;
}

const STATUS = /^(?:[1-5]xx|[1-5]\d\d)$/;

/** The filter of a query, or what is wrong with it (naming the parameter). */
export function parseLogFilter(params: URLSearchParams): LogFilter | string {
  const status = params.get('status');
  if (status !== null && !STATUS.test(status))
    return `status: "${status}" is not a status class (2xx … 5xx) or a status code`;
  const route = params.get('route');
  if (route !== null && (route === '' || route.length > 1024))
    return 'route: give a route template as the log has it, e.g. "get /users/{id}"';
  const text = params.get('text');
  if (text !== null && (text === '' || text.length > 1024)) return 'text: give between 1 and 1024 characters';
  const wanted = text?.toLowerCase() ?? null;
  const statusTest =
    status === null
      ? null
      : status.endsWith('xx')
        ? (s: number) => Math.floor(s / 100) === Number(status[0])
        : (s: number) => s === Number(status);
  if (statusTest === null && route === null && wanted === null) return { matches: () => true };
  return {
    matches(line) {
      if (wanted !== null && !line.toLowerCase().includes(wanted)) return false;
      if (statusTest === null && route === null) return true;
      let record: { status?: unknown; route?: unknown };
      try {
        record = JSON.parse(line) as typeof record;
      } catch {
        return false;
      }
      if (statusTest !== null && (typeof record.status !== 'number' || !statusTest(record.status))) return false;
      return route === null || record.route === route;
    },
  };
}
