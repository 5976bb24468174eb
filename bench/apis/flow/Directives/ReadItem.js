// SPEC's ReadUser on the benchmark's items table: the custom-directive twin of GET /flow/item/{id}
// (which reads the same row with the built-in DatabaseQuery).
export default function ReadItem(state, config) {
  const item = state.db.get('SELECT id, name, price FROM items WHERE id = ?', [config.id]);
  if (!item) state.fail(404, 'item not found');
  state.memory.set('item', item);
}
