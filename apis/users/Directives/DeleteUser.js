// Deletes one user; 404 when there was none to delete (the YAML then answers 204).

export default function DeleteUser(state, config) {
  const { changes } = state.db.run('DELETE FROM users WHERE id = ?', [config.id]);
  if (changes === 0) state.fail(404, `user ${config.id} not found`);
}
