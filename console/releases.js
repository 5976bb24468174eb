import { confirmAction, toast } from './confirm.js';
import { fill, h } from './dom.js';
import { when, releaseTime } from './format.js';
import { call, keyPath } from './http.js';

/**
 * An API's releases (the current one and the kept earlier ones, newest first) with the actions of
 * the management API's PUT: publish, disable, and switching to another release (a rollback when it
 * is older), each behind a confirmation.
 */
export function releasesPanel(key, { host, onChange }) {
  const section = h('section', { class: 'card', id: 'releases' }, h('h2', {}, 'Releases'));
  const actions = h('div', { class: 'buttons', id: 'api-actions' });
  const table = h(
    'table',
    { class: 'releases' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Release'), h('th', {}, 'Deployed'), h('th', {}, 'State'), h('th', {}, ''))),
  );
  const tbody = h('tbody', { id: 'release-rows' });
  table.append(tbody);
  section.append(actions, table);
  let record = null;

  const change = async ({ title, text, action, body, done }) => {
    if (!(await confirmAction({ title, text, action }))) return;
    try {
      await call(keyPath(key), { method: 'PUT', body });
      toast(done);
    } catch (error) {
      toast(`${action} failed: ${error.message}`, 'error');
    }
    onChange();
  };

  const publish = () =>
    change({
      title: `Publish ${key}?`,
      text: `Release ${record.release} answers on the public host ${host} for every client.`,
      action: 'Publish',
      body: { active: true, release: record.release, public: true },
      done: `${key} is public`,
    });
  const disable = () =>
    change({
      title: `Disable ${key}?`,
      text: `${key} answers 404 on every host, the admin host included, until it is published again.`,
      action: 'Disable',
      body: { active: false, release: record.release, public: record.public },
      done: `${key} is disabled`,
    });
  const switchTo = (release) => {
    const older = release < record.release;
    const deployed = releaseTime(release);
    return change({
      title: older ? `Roll back ${key}?` : `Switch ${key} to a newer release?`,
      text: `New requests go to ${release}${deployed ? ` (deployed ${when(deployed)})` : ''} at once; ${record.release} finishes what it has in flight and stays kept.`,
      action: older ? 'Roll back' : 'Switch',
      body: { active: record.active, release, public: record.public },
      done: older ? `${key} rolled back to ${release}` : `${key} switched to ${release}`,
    });
  };

  return {
    element: section,
    show(next) {
      // Rebuilt only when it changed: a button replaced under the pointer would lose its click.
      if (record !== null && JSON.stringify(record) === JSON.stringify(next)) return;
      record = next;
      const serving = !record.active ? 'disabled' : record.public ? 'public' : 'private';
      fill(
        actions,
        !(record.active && record.public)
          ? h('button', { type: 'button', id: 'publish', on: { click: publish } }, 'Publish')
          : null,
        record.active
          ? h('button', { type: 'button', id: 'disable', class: 'danger', on: { click: disable } }, 'Disable')
          : null,
      );
      const all = [record.release, ...record.releases].sort().reverse();
      fill(
        tbody,
        all.map((release) => {
          const current = release === record.release;
          const deployed = releaseTime(release);
          return h(
            'tr',
            { dataset: { release }, class: current ? 'current' : null },
            h('td', { class: 'mono' }, release),
            h('td', {}, deployed === null ? '–' : when(deployed)),
            h(
              'td',
              {},
              current
                ? h(
                    'span',
                    { class: `badge ${record.active ? 'status-public' : 'status-disabled'}` },
                    `current · ${serving}`,
                  )
                : 'kept',
            ),
            h(
              'td',
              {},
              current
                ? null
                : h(
                    'button',
                    {
                      type: 'button',
                      class: release < record.release ? 'danger rollback' : 'switch',
                      on: { click: () => switchTo(release) },
                    },
                    release < record.release ? 'Roll back' : 'Switch',
                  ),
            ),
          );
        }),
      );
    },
  };
}
