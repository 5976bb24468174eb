import { fill, h, setText } from './dom.js';
import { call } from './http.js';
import { auditTable } from './audit-table.js';

const ACTIONS = [
  'deploy',
  'publish',
  'disable',
  'rollback',
  'update',
  'delete',
  'host-add',
  'host-remove',
  'jobs-flush',
  'jobs-requeue-failed',
];
const PAGE = 50;

/** The audit log of the host (GET /anvil/audit), newest first, filtered by API and action, 50 at a time. */
export function auditPage(view) {
  const api = h('input', { id: 'audit-api', type: 'search', placeholder: 'API key', 'aria-label': 'API key' });
  const action = h(
    'select',
    { id: 'audit-action', 'aria-label': 'Action' },
    h('option', { value: '' }, 'any action'),
    ACTIONS.map((a) => h('option', { value: a }, a)),
  );
  const refresh = h('button', { type: 'button', class: 'quiet', id: 'audit-refresh' }, 'Refresh');
  const more = h('button', { type: 'button', class: 'quiet', id: 'audit-more', hidden: true }, 'Older entries');
  const status = h('p', { class: 'muted', id: 'audit-status' });
  const table = auditTable({ showApi: true });
  const controller = new AbortController();
  let next = null;

  const load = async (append) => {
    const params = new URLSearchParams({ limit: String(PAGE) });
    if (api.value.trim() !== '') params.set('api', api.value.trim().toLowerCase());
    if (action.value !== '') params.set('action', action.value);
    if (append && next !== null) params.set('before', String(next));
    try {
      const page = await call(`/anvil/audit?${params}`, { signal: controller.signal });
      table.show(page.entries, { append });
      next = page.next;
      more.hidden = next === null;
      status.classList.remove('error');
      setText(status, `as of ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (error.name === 'AbortError') return;
      status.classList.add('error');
      setText(status, error.message);
    }
  };

  let debounce = null;
  api.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(() => load(false), 300);
  });
  action.addEventListener('change', () => load(false));
  refresh.addEventListener('click', () => load(false));
  more.addEventListener('click', () => load(true));

  fill(
    view,
    h('h1', {}, 'Audit log'),
    h(
      'p',
      { class: 'muted' },
      'Every management action on this public host and the instance-wide ones, with the caller’s address and the fingerprint of the key it used (never the key).',
    ),
    h('div', { class: 'toolbar' }, api, action, refresh, status),
    h('div', { class: 'table-wrap' }, table.element),
    more,
  );
  void load(false);
  return {
    stop() {
      clearTimeout(debounce);
      controller.abort();
    },
  };
}
