import { confirmAction, toast } from './confirm.js';
import { fill, h } from './dom.js';
import { count } from './format.js';
import { call, keyPath } from './http.js';

const STATES = ['waiting', 'delayed', 'active', 'completed', 'failed'];

/** An API's jobs per state, with the two actions of `anvil jobs`: requeue the failed ones, flush. */
export function jobsPanel(key) {
  const figures = h('dl', { class: 'job-counts', id: 'job-counts' });
  const retry = h('button', { type: 'button', id: 'jobs-retry' }, 'Retry failed');
  const flush = h('button', { type: 'button', id: 'jobs-flush', class: 'danger' }, 'Flush');
  const note = h('p', { class: 'muted' });
  const section = h(
    'section',
    { class: 'card', id: 'jobs' },
    h('h2', {}, 'Jobs'),
    figures,
    h('div', { class: 'buttons' }, retry, flush),
    note,
  );
  let counts = null;
  let changed = () => {};

  const act = async (path, question, done) => {
    if (!(await confirmAction(question))) return;
    try {
      const answer = await call(`${keyPath(key)}/jobs/${path}`, { method: 'POST' });
      toast(done(answer));
    } catch (error) {
      toast(`${question.action} failed: ${error.message}`, 'error');
    }
    changed();
  };
  retry.addEventListener('click', () =>
    act(
      'requeue-failed',
      {
        title: `Retry the failed jobs of ${key}?`,
        text: `${count(counts?.failed ?? 0)} failed job(s) go back to waiting with their attempts reset.`,
        action: 'Retry failed',
      },
      (a) => `${a.requeued} job(s) requeued`,
    ),
  );
  flush.addEventListener('click', () =>
    act(
      'flush',
      {
        title: `Flush the jobs of ${key}?`,
        text: 'Waiting, delayed, completed and failed jobs are removed for good (running ones finish).',
        action: 'Flush',
      },
      (a) => `${a.removed} job(s) removed`,
    ),
  );

  return {
    element: section,
    onChange(handler) {
      changed = handler;
    },
    async refresh(signal) {
      try {
        counts = (await call(`${keyPath(key)}/jobs`, { signal })).counts;
      } catch (error) {
        if (error.name === 'AbortError') throw error;
        fill(note, `The job queue cannot be read: ${error.message}`);
        return;
      }
      fill(note);
      fill(
        figures,
        STATES.map((s) => h('div', { dataset: { state: s } }, h('dt', {}, s), h('dd', {}, count(counts[s])))),
      );
      retry.disabled = counts.failed === 0;
    },
  };
}
