import { fill, h, setText } from './dom.js';
import { ms } from './format.js';
import { authHeaders, call, keyPath } from './http.js';

const MAX_LINES = 200;
const RECENT_LINES = 50;
const RECONNECT_MS = 3000;

/**
 * An API's request log, live: the last lines, then the lines written from now on, read from the
 * Server-Sent Events of GET /anvil/api/<key>/logs?follow=1 with fetch() (EventSource cannot send
 * the management headers) and a stream reader. Filters (status class, route, text) are the
 * endpoint's own; the newest line is on top, at most MAX_LINES are kept.
 */
export function logTail(key) {
  const status = h(
    'select',
    { id: 'log-status', 'aria-label': 'Status' },
    ['', '2xx', '3xx', '4xx', '5xx'].map((v) => h('option', { value: v }, v === '' ? 'any status' : v)),
  );
  const route = h('input', {
    id: 'log-route',
    type: 'search',
    placeholder: 'route, e.g. get /users/{id}',
    'aria-label': 'Route template',
  });
  const text = h('input', {
    id: 'log-text',
    type: 'search',
    placeholder: 'text anywhere in the line',
    'aria-label': 'Text',
  });
  const pause = h('button', { type: 'button', class: 'quiet', id: 'log-pause' }, 'Pause');
  const state = h('span', { class: 'muted', id: 'log-state' }, 'connecting…');
  const list = h('ol', { class: 'log-lines', id: 'log-lines' });
  const section = h(
    'section',
    { class: 'card', id: 'log-tail' },
    h('h2', {}, 'Request log, live'),
    h('div', { class: 'toolbar' }, status, route, text, pause, state),
    list,
  );

  let controller = null;
  let paused = false;
  let held = [];
  let retry = null;

  const add = (line) => {
    if (paused) {
      held.push(line);
      if (held.length > MAX_LINES) held.shift();
      setText(pause, `Resume (${held.length} new)`);
      return;
    }
    list.prepend(renderLine(line));
    while (list.childElementCount > MAX_LINES) list.lastElementChild.remove();
  };

  const query = () => {
    const params = new URLSearchParams();
    if (status.value !== '') params.set('status', status.value);
    if (route.value.trim() !== '') params.set('route', route.value.trim());
    if (text.value.trim() !== '') params.set('text', text.value.trim());
    const q = params.toString();
    return q === '' ? '' : `&${q}`;
  };

  const start = async () => {
    controller?.abort();
    clearTimeout(retry);
    const own = (controller = new AbortController());
    fill(list);
    held = [];
    const filters = query();
    try {
      const recent = await call(`${keyPath(key)}/logs?limit=${RECENT_LINES}${filters}`, { signal: own.signal });
      for (const line of recent.lines) add(line);
      await follow(own.signal, filters);
    } catch (error) {
      if (error.name === 'AbortError') return;
      state.className = 'error';
      setText(state, `not following: ${error.message}; trying again in ${RECONNECT_MS / 1000} s`);
    }
    if (!own.signal.aborted) retry = setTimeout(start, RECONNECT_MS);
  };

  const follow = async (signal, filters) => {
    const response = await fetch(`${keyPath(key)}/logs?follow=1${filters}`, {
      headers: authHeaders(),
      signal,
      cache: 'no-store',
    });
    if (!response.ok) {
      const body = await response.json().catch(() => ({}));
      throw new Error(body.error ?? `${response.status} ${response.statusText}`);
    }
    state.className = 'live';
    setText(state, 'live');
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
          .join('\n');
        if (data !== '') add(parse(data));
      }
    }
    state.className = 'muted';
    setText(state, 'the stream ended (the instance drains?); reconnecting…');
  };

  pause.addEventListener('click', () => {
    paused = !paused;
    if (!paused) {
      const lines = held;
      held = [];
      for (const line of lines) add(line);
    }
    setText(pause, paused ? 'Resume' : 'Pause');
  });
  let debounce = null;
  for (const input of [status, route, text]) {
    input.addEventListener(input === status ? 'change' : 'input', () => {
      clearTimeout(debounce);
      debounce = setTimeout(start, 300);
    });
  }
  void start();

  return {
    element: section,
    stop() {
      clearTimeout(retry);
      clearTimeout(debounce);
      controller?.abort();
    },
  };
}

function parse(data) {
  try {
    return JSON.parse(data);
  } catch {
    return { raw: data };
  }
}

function statusClass(status) {
  return typeof status === 'number' ? `s${Math.floor(status / 100)}xx` : 'sunknown';
}

/** One line: time, status, verb and path, duration, the first error; the whole JSON when opened. */
function renderLine(line) {
  const time = typeof line.time === 'string' ? line.time.slice(11, 23) : '';
  const error =
    Array.isArray(line.errors) && line.errors.length > 0 ? (line.errors[0].message ?? line.errors[0].label ?? '') : '';
  return h(
    'li',
    { class: statusClass(line.status), dataset: { status: line.status ?? '' } },
    h(
      'details',
      {},
      h(
        'summary',
        {},
        h('span', { class: 'time mono' }, time),
        h('span', { class: 'status' }, line.status ?? '?'),
        h('span', { class: 'request mono' }, line.raw ?? `${line.verb ?? ''} ${line.path ?? ''}`),
        h('span', { class: 'duration' }, typeof line.durationMs === 'number' ? ms(line.durationMs) : ''),
        error !== '' ? h('span', { class: 'message' }, error) : null,
      ),
      h('pre', { class: 'mono' }, JSON.stringify(line, null, 2)),
    ),
  );
}
