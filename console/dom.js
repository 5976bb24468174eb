// A small DOM builder: pages are built from elements and text nodes, never from HTML strings, so a
// value from an API (a log line, a route, an error message) is always text.

/**
 * h('a', { href: '#/', class: 'x', dataset: { key } }, 'text', child…). Attributes whose value is
 * null, undefined or false are left out; `on` takes event listeners.
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'on')
      for (const [event, listener] of Object.entries(value)) element.addEventListener(event, listener);
    else if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

/** Sets a text only when it changed (no layout work for a figure that stayed the same). */
export function setText(element, text) {
  const value = String(text);
  if (element.textContent !== value) element.textContent = value;
}
