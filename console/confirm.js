import { setText } from './dom.js';

/**
 * Asks before an action that changes the instance (publish, disable, rollback, job actions):
 * resolves true when the operator confirms with the named button, false on Cancel or Escape.
 */
export function confirmAction({ title, text, action }) {
  const dialog = document.getElementById('confirm');
  setText(document.getElementById('confirm-title'), title);
  setText(document.getElementById('confirm-text'), text);
  setText(document.getElementById('confirm-ok'), action);
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) =>
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true }),
  );
}

let hideTimer = null;

/** A short note of what happened (or failed), for a few seconds. */
export function toast(message, kind = 'ok') {
  const element = document.getElementById('toast');
  element.textContent = message;
  element.className = kind;
  element.hidden = false;
  clearTimeout(hideTimer);
  hideTimer = setTimeout(() => (element.hidden = true), 6000);
}
