// Runs as the job: `state.id` is the job id; the message is the request as it was queued.
import type { DirectiveState } from '../../../sandbox/directive.js';

export default function (state: DirectiveState): void {
  const words = (state.message.body as { words: string[] }).words;
  const longest = words.reduce((a, b) => (b.length > a.length ? b : a), '');
  const letters = words.reduce((n, w) => n + w.length, 0);
  // INSERT OR REPLACE: a job runs at least once, so running it twice must do no harm.
  state.db.run('INSERT OR REPLACE INTO reports (id, words, longest, letters, finished_at) VALUES (?, ?, ?, ?, ?)', [
    state.id,
    words.length,
    longest,
    letters,
    new Date().toISOString(),
  ]);
}
