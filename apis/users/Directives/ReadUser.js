// Reads one user into memory `user`; the YAML's Reply entry sends it. 404 when there is none.

export default function ReadUser(state, config) {
  // Always bound parameters (the `?`), never SQL built from strings: the id is data, not SQL.
  const user = state.db.get('SELECT id, name, email, created_at, updated_at FROM users WHERE id = ?', [config.id]);
  if (user === null) state.fail(404, `user ${config.id} not found`);
  state.memory.set('user', user);
}
