// GET /users?limit=&offset=: one page of users, oldest first, with the total for paging.
// This directive writes the response itself, through state.message.

const DEFAULT_LIMIT = 20;
const MAX_LIMIT = 100;

export default function ListUsers(state, config) {
  const problems = [];
  const limit = readCount(config.limit, DEFAULT_LIMIT, 'limit', 1, problems);
  const offset = readCount(config.offset, 0, 'offset', 0, problems);
  if (problems.length > 0) state.fail(400, problems.join('; '));

  // A bigger limit is not an error: it is capped, and the reply says which limit was used.
  const pageSize = Math.min(limit, MAX_LIMIT);
  const users = state.db.all(
    'SELECT id, name, email, created_at, updated_at FROM users ORDER BY id LIMIT ? OFFSET ?',
    [pageSize, offset],
  );
  const { total } = state.db.get('SELECT count(*) AS total FROM users');

  // Setting headers replaces them all: only what is set here reaches the client.
  state.message.headers = { 'content-type': 'application/json' };
  state.message.body = { users, total, limit: pageSize, offset };
}

/** A query parameter as an integer >= min; absent or empty: the default; else a problem. */
function readCount(raw, fallback, name, min, problems) {
  if (raw === null || raw === '') return fallback;
  // ?limit=1&limit=2 arrives as a list.
  if (typeof raw !== 'string' || !/^[0-9]{1,9}$/.test(raw) || Number(raw) < min) {
    problems.push(`${name} must be an integer of at least ${min}, not ${JSON.stringify(raw)}`);
    return fallback;
  }
  return Number(raw);
}
