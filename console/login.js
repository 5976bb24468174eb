import { fill, h } from './dom.js';
import { call, HttpError } from './http.js';
import { remember } from './session.js';

/**
 * The login form: a public host's name and key, checked against the admin host (a one-entry read of
 * the audit log) before being kept. A wrong pair is said plainly; nothing is kept then.
 */
export function showLogin(view, { message, onLogin }) {
  const host = h('input', {
    id: 'login-host',
    name: 'host',
    required: true,
    autocomplete: 'username',
    spellcheck: 'false',
    placeholder: 'localhost',
  });
  const key = h('input', {
    id: 'login-key',
    name: 'key',
    type: 'password',
    required: true,
    autocomplete: 'current-password',
  });
  const error = h(
    'p',
    { id: 'login-error', class: 'error', role: 'alert', hidden: message === null || message === undefined },
    message ?? '',
  );
  const submit = h('button', { type: 'submit', id: 'login-submit' }, 'Log in');
  host.value = 'localhost';
  const controller = new AbortController();

  const form = h(
    'form',
    {
      class: 'login card',
      on: {
        submit: async (event) => {
          event.preventDefault();
          const given = { host: host.value.trim().toLowerCase(), key: key.value };
          submit.disabled = true;
          error.hidden = true;
          try {
            await call('/anvil/audit?limit=1', { as: given, signal: controller.signal });
            remember(given.host, given.key);
            onLogin();
          } catch (failure) {
            if (failure.name === 'AbortError') return;
            error.textContent =
              failure instanceof HttpError && failure.status === 401
                ? `Wrong public host or key: the admin host answered 401 Unauthorized for public host "${given.host}". Check the name and its key (the instance printed it at first boot; it is in data/.anvil/public-host-key).`
                : `The admin host could not be asked: ${failure.message}`;
            error.hidden = false;
            key.select();
          } finally {
            submit.disabled = false;
          }
        },
      },
    },
    h('h1', {}, 'Log in to the console'),
    h(
      'p',
      { class: 'muted' },
      'The console acts for one public host with its key, as the management API does. The key is kept in this tab only (sessionStorage) and sent as the public-host-key header.',
    ),
    h('label', { for: 'login-host' }, 'Public host'),
    host,
    h('label', { for: 'login-key' }, 'Public host key'),
    key,
    error,
    submit,
  );
  fill(view, form);
  key.focus();
  return { stop: () => controller.abort() };
}
