export default function ReadNote(state, config) {
  const note = state.db.get('select id, title, body, n from notes where id = ?', [Number(config.id)]);
  if (!note) state.fail(404, 'no such note');
  state.message.body = note;
}
