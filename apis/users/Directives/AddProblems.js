// Runs in ERROR_FLOW, right after OnError (see api.yaml). OnError renders {"error": "..."} only;
// when ValidateUser refused a body it left the list of what is wrong in memory `problems`, and
// this adds it to the error body: {"error": "...", "problems": [{"field", "message"}, ...]}.
// Any other error (404, 409, ...) has no `problems` and passes through unchanged.

export default function AddProblems(state) {
  const problems = state.memory.get('problems');
  if (!Array.isArray(problems)) return;
  // The body OnError wrote is JSON, so it reads back parsed. Its content-type stays as it is.
  const body = state.message.body;
  state.message.body = { ...body, problems };
}
