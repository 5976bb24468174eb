import { fill, h, setText } from './dom.js';
import { count, duration, ms, percent, rate } from './format.js';
import { call } from './http.js';
import { COLUMNS, OverviewRows, sortApis } from './overview-table.js';
import { poll } from './poll.js';

const PAGE_SIZE = 50;
/** Kept while the tab lives, so that coming back from an API's page shows the same view. */
const state = { sort: 'key', direction: 1, page: 0, filter: '', window: 'last1m' };
let firstRender = true;

/**
 * The overview: the instance, the host's totals and a table of its APIs, read every second from
 * GET /anvil/overview. Sortable by any figure; paginated (50 rows a page) with a key filter, so a
 * host of 1,000 APIs keeps 50 rows in the page.
 */
export function overviewPage(view) {
  const summary = h('section', { class: 'cards', id: 'summary' });
  const status = h('p', { class: 'muted', id: 'overview-status' }, 'Loading…');
  const filter = h('input', {
    id: 'api-filter',
    type: 'search',
    placeholder: 'Filter by key',
    value: state.filter,
    'aria-label': 'Filter APIs by key',
  });
  const windowSelect = h(
    'select',
    { id: 'window', 'aria-label': 'Window' },
    h('option', { value: 'last1m' }, 'last minute'),
    h('option', { value: 'last5m' }, 'last 5 minutes'),
  );
  windowSelect.value = state.window;
  const pager = h('div', { class: 'pager', id: 'pager' });
  const headRow = h('tr');
  const tbody = h('tbody', { id: 'api-rows' });
  const rows = new OverviewRows(tbody);
  let latest = null;
  let showPager = () => {};

  const render = () => {
    if (latest === null) return;
    const wanted = state.filter.trim().toLowerCase();
    const matching = wanted === '' ? latest.apis : latest.apis.filter((a) => a.key.includes(wanted));
    const pages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const sorted = sortApis(matching, state.sort, state.direction, state.window);
    rows.show(sorted.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE), state.window);
    showPager(matching.length, pages);
    for (const th of headRow.children)
      th.setAttribute(
        'aria-sort',
        th.dataset.column === state.sort ? (state.direction === 1 ? 'ascending' : 'descending') : 'none',
      );
    if (firstRender) {
      firstRender = false;
      performance.mark('anvil:overview-rendered');
    }
  };

  for (const column of COLUMNS) {
    const th = h(
      'th',
      { scope: 'col', dataset: { column: column.id }, class: column.numeric ? 'num' : null },
      column.label,
    );
    if (column.sort !== null) {
      th.classList.add('sortable');
      th.tabIndex = 0;
      const sortBy = () => {
        state.direction = state.sort === column.id ? -state.direction : column.numeric ? -1 : 1;
        state.sort = column.id;
        render();
      };
      th.addEventListener('click', sortBy);
      th.addEventListener('keydown', (event) => event.key === 'Enter' && sortBy());
    }
    headRow.append(th);
  }
  filter.addEventListener('input', () => {
    state.filter = filter.value;
    state.page = 0;
    render();
  });
  windowSelect.addEventListener('change', () => {
    state.window = windowSelect.value;
    render();
  });

  showPager = pagerOf(pager, () => render());
  fill(
    view,
    h('h1', {}, 'Overview'),
    summary,
    h('div', { class: 'toolbar' }, filter, h('label', {}, 'Figures over ', windowSelect), status),
    h('div', { class: 'table-wrap' }, h('table', { class: 'apis', id: 'api-table' }, h('thead', {}, headRow), tbody)),
    pager,
  );

  const updates = poll(1000, async (signal) => {
    try {
      latest = await call('/anvil/overview', { signal });
    } catch (error) {
      if (error.name === 'AbortError') throw error;
      status.classList.add('error');
      setText(status, `The admin host did not answer: ${error.message} (retrying every second)`);
      return;
    }
    status.classList.remove('error');
    setText(status, `Live, every second · ${new Date().toLocaleTimeString()}`);
    renderSummary(summary, latest, state.window);
    render();
  });
  return { stop: () => updates.stop() };
}

function renderSummary(summary, data, window) {
  const { instance, totals } = data;
  const figures = totals[window];
  const card = (id, label, value, note) =>
    h(
      'div',
      { class: 'card figure', dataset: { figure: id } },
      h('span', { class: 'label' }, label),
      h('span', { class: 'value' }, value),
      note ? h('span', { class: 'note' }, note) : null,
    );
  fill(
    summary,
    card(
      'apis',
      'APIs',
      count(totals.apis),
      `${totals.public} public · ${totals.active} private · ${totals.paused} paused · ${totals.disabled} disabled`,
    ),
    card(
      'rate',
      'Requests',
      `${rate(figures.perSecond)}/s`,
      `${count(figures.requests)} in the ${window === 'last1m' ? 'last minute' : 'last 5 minutes'}`,
    ),
    card('latency', 'Latency p50 / p99', `${ms(figures.p50Ms)} / ${ms(figures.p99Ms)}`),
    card(
      'errors',
      'Errors (5xx)',
      percent(figures.errorRate),
      `${count(figures.errors)} · ${count(figures.rateLimited)} answered 429`,
    ),
    card(
      'jobs',
      'Jobs waiting / failed',
      totals.jobs === null ? 'queue unreadable' : `${count(totals.jobs.waiting)} / ${count(totals.jobs.failed)}`,
    ),
    card(
      'instance',
      `Anvil ${instance.version}`,
      `up ${duration(instance.uptimeSeconds)}`,
      `${instance.cells} cells · ${instance.threads} threads`,
    ),
  );
}

/**
 * The pager's buttons are made once and updated in place: rebuilt every second, a button could be
 * replaced between the press and the release of a click, and the click lost.
 */
function pagerOf(pager, render) {
  const go = (to) => () => {
    state.page = Math.max(0, Math.min(pages - 1, to()));
    render();
  };
  let pages = 1;
  const first = h(
    'button',
    { type: 'button', class: 'quiet', id: 'page-first', on: { click: go(() => 0) } },
    '« First',
  );
  const previous = h(
    'button',
    { type: 'button', class: 'quiet', id: 'page-previous', on: { click: go(() => state.page - 1) } },
    '‹ Previous',
  );
  const info = h('span', { id: 'page-info' });
  const next = h(
    'button',
    { type: 'button', class: 'quiet', id: 'page-next', on: { click: go(() => state.page + 1) } },
    'Next ›',
  );
  const last = h(
    'button',
    { type: 'button', class: 'quiet', id: 'page-last', on: { click: go(() => pages - 1) } },
    'Last »',
  );
  fill(pager, first, previous, info, next, last);
  return (total, pageCount) => {
    pages = pageCount;
    const from = total === 0 ? 0 : state.page * PAGE_SIZE + 1;
    const to = Math.min(total, (state.page + 1) * PAGE_SIZE);
    first.disabled = previous.disabled = state.page === 0;
    next.disabled = last.disabled = state.page >= pages - 1;
    setText(info, `${count(from)}–${count(to)} of ${count(total)} APIs · page ${state.page + 1} of ${pages}`);
  };
}
