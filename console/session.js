// The credentials the console acts with: a public host's name and key, typed once and kept in
// sessionStorage (this tab only, gone when it closes), sent with every data call as the management
// API's headers.

const STORAGE_KEY = 'anvil.console.credentials';

export function credentials() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
    return stored !== null && typeof stored.host === 'string' && typeof stored.key === 'string' ? stored : null;
  } catch {
    return null;
  }
}

export function remember(host, key) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify({ host, key }));
}

export function forget() {
  sessionStorage.removeItem(STORAGE_KEY);
}
