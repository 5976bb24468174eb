// The console's shell: who is logged in, which page the address names (#/, #/api/<key>, #/audit),
// and stopping a page's polls when another one is shown.
import { apiPage } from './api-page.js';
import { auditPage } from './audit.js';
import { setText } from './dom.js';
import { whenUnauthorized } from './http.js';
import { showLogin } from './login.js';
import { overviewPage } from './overview.js';
import { credentials, forget } from './session.js';

const view = document.getElementById('view');
let page = null;
let loginMessage = null;

function show() {
  page?.stop();
  page = null;
  const who = credentials();
  document.getElementById('nav').hidden = who === null;
  document.getElementById('who').hidden = who === null;
  if (who === null) {
    page = showLogin(view, { message: loginMessage, onLogin: () => ((loginMessage = null), show()) });
    return;
  }
  setText(document.getElementById('who-host'), `public host ${who.host}`);
  const path = location.hash.replace(/^#/, '') || '/';
  const api = /^\/api\/([^/]+)$/.exec(path);
  let name = 'overview';
  if (path === '/audit') {
    name = 'audit';
    page = auditPage(view);
  } else if (api !== null) {
    name = 'api';
    page = apiPage(view, decodeURIComponent(api[1]));
  } else {
    page = overviewPage(view);
  }
  document.body.dataset.page = name;
  for (const link of document.querySelectorAll('[data-nav]'))
    link.classList.toggle('current', link.dataset.nav === name);
}

whenUnauthorized(() => {
  forget();
  loginMessage = 'The admin host no longer accepts this key (401 Unauthorized): log in again.';
  show();
});
document.getElementById('logout').addEventListener('click', () => {
  forget();
  loginMessage = null;
  show();
});
window.addEventListener('hashchange', show);
show();
