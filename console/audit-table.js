import { fill, h } from './dom.js';
import { when } from './format.js';

/** Audit entries as a table, newest first (the audit page's and an API page's). */
export function auditTable({ showApi }) {
  const headings = ['Time', 'Action', showApi ? 'API' : null, 'Release', 'Result', 'Address', 'Key', 'Origin'].filter(
    (t) => t !== null,
  );
  const tbody = h('tbody', { class: 'audit-rows' });
  const element = h(
    'table',
    { class: 'audit' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headings.map((t) => h('th', {}, t)),
      ),
    ),
    tbody,
  );

  const row = (e) =>
    h(
      'tr',
      { dataset: { id: e.id, action: e.action }, class: e.result === 'ok' ? null : 'failed' },
      h('td', { title: e.time }, when(e.time)),
      h('td', {}, h('span', { class: `badge action-${e.action}` }, e.action)),
      showApi
        ? h('td', {}, e.api === null ? '–' : h('a', { href: `#/api/${encodeURIComponent(e.api)}` }, e.api))
        : null,
      h('td', { class: 'mono' }, e.release ?? '–'),
      h(
        'td',
        { title: e.error ?? '' },
        e.result === 'ok'
          ? `ok${e.status === null ? '' : ` (${e.status})`}`
          : `failed${e.status === null ? '' : ` (${e.status})`}: ${e.error ?? ''}`,
      ),
      h('td', { class: 'mono' }, e.address ?? '–'),
      h('td', { class: 'mono', title: 'first 12 hex digits of the SHA-256 of the key used' }, e.keyFingerprint ?? '–'),
      h('td', {}, e.origin === 'cli' ? `cli${e.detail?.user ? ` (${e.detail.user})` : ''}` : e.origin),
    );

  return {
    element,
    show(entries, { append = false } = {}) {
      const rows = entries.map(row);
      if (append) tbody.append(...rows);
      else if (rows.length === 0)
        fill(tbody, h('tr', {}, h('td', { colspan: headings.length, class: 'muted' }, 'No entries.')));
      else fill(tbody, rows);
    },
  };
}
