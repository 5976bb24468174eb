// Checks the {id} of the path and stores it as a number in memory `userId`, so the directives
// after it (ReadUser, UpdateUser, DeleteUser) get a clean value through `$.memory.userId`.
//
// A directive is one self-contained file (no imports): the default export gets `state` (the
// request, its memory, the database...) and `config` (the entry's parameters, aliases resolved).

// Digits only, no leading zero, and small enough to be an exact JavaScript number.
const POSITIVE_INTEGER = /^[1-9][0-9]{0,15}$/;

export default function UserId(state, config) {
  const id = config.id;
  if (typeof id !== 'string' || !POSITIVE_INTEGER.test(id) || !Number.isSafeInteger(Number(id))) {
    // fail() ends this directive and switches the flow to ERROR_FLOW: OnError renders
    // {"error": "..."} with this status. JSON.stringify quotes the value the client sent.
    state.fail(400, `id must be a positive integer, not ${JSON.stringify(String(id).slice(0, 40))}`);
  }
  state.memory.set('userId', Number(id));
}
