import { auditTable } from './audit-table.js';
import { latencyChart } from './chart.js';
import { fill, h, setText } from './dom.js';
import { count, ms, percent, rate } from './format.js';
import { call, keyPath } from './http.js';
import { jobsPanel } from './jobs-panel.js';
import { logTail } from './log-tail.js';
import { poll } from './poll.js';
import { releasesPanel } from './releases.js';
import { credentials } from './session.js';

/**
 * One API: its live figures and latency chart, its routes with p50/p99 (GET …/stats every second),
 * its releases with publish/disable/rollback (GET /anvil/api/<key> every 5 s and after an action),
 * its jobs, its request log live, and the audit log's last entries for it.
 */
export function apiPage(view, key) {
  const heading = h(
    'h1',
    {},
    h('a', { href: '#/', class: 'quiet' }, 'Overview'),
    ' › ',
    h('span', { id: 'api-key' }, key),
    ' ',
    h('span', { class: 'badge', id: 'api-status' }),
  );
  const problem = h('p', { class: 'error', id: 'api-problem', hidden: true });
  const cards = h('section', { class: 'cards', id: 'api-figures' });
  const chartCard = h('section', { class: 'card', id: 'chart' }, h('h2', {}, 'Latency and requests, last 5 minutes'));
  const routes = h('tbody', { id: 'route-rows' });
  const routesCard = h(
    'section',
    { class: 'card', id: 'routes' },
    h('h2', {}, 'Routes, last minute'),
    h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Route', 'req/s', 'p50', 'p99', 'Errors', '429s'].map((t, i) => h('th', { class: i > 0 ? 'num' : null }, t)),
        ),
      ),
      routes,
    ),
  );
  const releases = releasesPanel(key, { host: credentials()?.host ?? '', onChange: () => records.now() });
  const jobs = jobsPanel(key);
  const tail = logTail(key);
  const actions = auditTable({ showApi: false });
  const actionsCard = h(
    'section',
    { class: 'card', id: 'api-audit' },
    h('h2', {}, 'Recent management actions'),
    actions.element,
  );
  const chart = latencyChart(chartCard);

  fill(
    view,
    heading,
    problem,
    cards,
    h(
      'div',
      { class: 'columns' },
      h('div', {}, chartCard, routesCard, tail.element),
      h('div', {}, releases.element, jobs.element, actionsCard),
    ),
  );

  const missing = (error) => {
    if (error.status !== 404) return false;
    problem.hidden = false;
    setText(problem, `The host has no API "${key}" (${error.message}).`);
    return true;
  };

  const audit = poll(5000, async (signal) =>
    actions.show((await call(`/anvil/audit?api=${encodeURIComponent(key)}&limit=10`, { signal })).entries),
  );
  const stats = poll(1000, async (signal) => {
    let answer;
    try {
      answer = await call(`${keyPath(key)}/stats?window=1m`, { signal });
    } catch (error) {
      if (!missing(error)) throw error;
      return stats.stop();
    }
    renderCards(cards, answer.totals);
    renderRoutes(routes, answer.routes);
    await chart.update(answer.series);
  });
  const records = poll(5000, async (signal) => {
    let record;
    try {
      record = await call(keyPath(key), { signal });
    } catch (error) {
      if (!missing(error)) throw error;
      return records.stop();
    }
    const badge = document.getElementById('api-status');
    const status = !record.active ? 'disabled' : record.public ? 'public' : 'active';
    badge.className = `badge status-${status}`;
    setText(badge, `${status} · ${record.release}`);
    releases.show(record);
    audit.now();
  });
  const jobCounts = poll(2000, (signal) => jobs.refresh(signal));
  jobs.onChange(() => {
    jobCounts.now();
    audit.now();
  });

  return {
    stop() {
      for (const p of [stats, records, jobCounts, audit]) p.stop();
      tail.stop();
      chart.stop();
    },
  };
}

function renderCards(cards, totals) {
  const card = (id, label, value) =>
    h(
      'div',
      { class: 'card figure', dataset: { figure: id } },
      h('span', { class: 'label' }, label),
      h('span', { class: 'value' }, value),
    );
  fill(
    cards,
    card('rate', 'req/s (1 min)', rate(totals.perSecond)),
    card('requests', 'Requests (1 min)', count(totals.requests)),
    card('latency', 'p50 / p99', `${ms(totals.p50Ms)} / ${ms(totals.p99Ms)}`),
    card('errors', 'Errors (5xx)', `${percent(totals.errorRate)} · ${count(totals.errors)}`),
    card('limited', '429s', count(totals.rateLimited)),
    card('breaches', 'Sandbox breaches', count(totals.sandboxBreaches)),
  );
}

function renderRoutes(tbody, routes) {
  if (routes.length === 0)
    return fill(tbody, h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No requests in the last minute.')));
  fill(
    tbody,
    routes.map((r) =>
      h(
        'tr',
        { dataset: { route: r.route } },
        h('td', { class: 'mono' }, r.route),
        h('td', { class: 'num', dataset: { field: 'perSecond' } }, rate(r.perSecond)),
        h('td', { class: 'num', dataset: { field: 'p50' } }, ms(r.p50Ms)),
        h('td', { class: 'num', dataset: { field: 'p99' } }, ms(r.p99Ms)),
        h('td', { class: 'num' }, percent(r.errorRate)),
        h('td', { class: 'num' }, count(r.rateLimited)),
      ),
    ),
  );
}
