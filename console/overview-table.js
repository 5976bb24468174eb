import { h, setText } from './dom.js';
import { count, ms, percent, rate } from './format.js';
import { sparkline } from './sparkline.js';

/** The figures of the window the operator picked (`last1m` or `last5m`). */
const figures = (api, window) => api[window];

/** The overview's columns: how each reads, and what it sorts by (null: not sortable). */
export const COLUMNS = [
  { id: 'key', label: 'API', sort: (a) => a.key },
  { id: 'status', label: 'Status', sort: (a) => a.status },
  { id: 'release', label: 'Release', sort: (a) => a.release },
  { id: 'recent', label: 'Last minute', sort: null },
  {
    id: 'perSecond',
    label: 'req/s',
    numeric: true,
    sort: (a, w) => figures(a, w).perSecond,
    show: (a, w) => rate(figures(a, w).perSecond),
  },
  {
    id: 'p50',
    label: 'p50',
    numeric: true,
    sort: (a, w) => figures(a, w).p50Ms,
    show: (a, w) => ms(figures(a, w).p50Ms),
  },
  {
    id: 'p99',
    label: 'p99',
    numeric: true,
    sort: (a, w) => figures(a, w).p99Ms,
    show: (a, w) => ms(figures(a, w).p99Ms),
  },
  {
    id: 'errorRate',
    label: 'Errors',
    numeric: true,
    sort: (a, w) => figures(a, w).errorRate,
    show: (a, w) => percent(figures(a, w).errorRate),
  },
  {
    id: 'rateLimited',
    label: '429s',
    numeric: true,
    sort: (a, w) => figures(a, w).rateLimited,
    show: (a, w) => count(figures(a, w).rateLimited),
  },
  {
    id: 'breaches',
    label: 'Sandbox breaches',
    numeric: true,
    sort: (a, w) => figures(a, w).sandboxBreaches,
    show: (a, w) => count(figures(a, w).sandboxBreaches),
  },
  {
    id: 'jobs',
    label: 'Jobs waiting / failed',
    numeric: true,
    sort: (a) => (a.jobs === null ? null : a.jobs.failed * 1e9 + a.jobs.waiting),
    show: (a) => (a.jobs === null ? 'queue unreadable' : `${count(a.jobs.waiting)} / ${count(a.jobs.failed)}`),
  },
  { id: 'threads', label: 'Threads', numeric: true, sort: (a) => a.threads, show: (a) => count(a.threads) },
];

/** Sorts APIs by a column (nulls last either way), then by key. */
export function sortApis(apis, columnId, direction, window) {
  const column = COLUMNS.find((c) => c.id === columnId) ?? COLUMNS[0];
  return [...apis].sort((a, b) => {
    const x = column.sort(a, window);
    const y = column.sort(b, window);
    if (x !== y) {
      if (x === null || x === undefined) return 1;
      if (y === null || y === undefined) return -1;
      const order = typeof x === 'string' ? x.localeCompare(y) : x - y;
      if (order !== 0) return order * direction;
    }
    return a.key.localeCompare(b.key);
  });
}

/**
 * The rows of the page shown, kept by API key between polls: a row's cells (and its sparkline's
 * canvas) are updated in place, and only the page's rows exist, however many APIs the host has.
 */
export class OverviewRows {
  constructor(tbody) {
    this.tbody = tbody;
    this.rows = new Map();
  }

  show(apis, window) {
    const kept = new Map();
    const ordered = apis.map((api) => {
      const row = this.rows.get(api.key) ?? this.create(api.key);
      this.update(row, api, window);
      kept.set(api.key, row);
      return row.tr;
    });
    this.rows = kept;
    this.tbody.replaceChildren(...ordered);
  }

  create(key) {
    const cells = {};
    const spark = sparkline();
    const tr = h('tr', { dataset: { key } });
    for (const column of COLUMNS) {
      const td = h('td', { dataset: { field: column.id }, class: column.numeric ? 'num' : null });
      if (column.id === 'key') td.append(h('a', { href: `#/api/${encodeURIComponent(key)}` }, key));
      else if (column.id === 'recent') td.append(spark.canvas);
      else if (column.id === 'status') td.append(h('span', { class: 'badge' }));
      cells[column.id] = td;
      tr.append(td);
    }
    return { tr, cells, spark };
  }

  update(row, api, window) {
    const badge = row.cells.status.firstChild;
    setText(badge, api.status);
    badge.className = `badge status-${api.status}`;
    if (api.pausedUntil !== null) badge.title = `paused until ${api.pausedUntil}`;
    setText(row.cells.release, api.release);
    row.spark.draw(api.recentRequests);
    for (const column of COLUMNS)
      if (column.show !== undefined) setText(row.cells[column.id], column.show(api, window));
  }
}
