// Runs in the request: refuses a bad body before anything is queued (400, not a failed job).
export default function (state) {
  const body = state.message.body;
  const words = body !== null && typeof body === 'object' ? body.words : undefined;
  if (!Array.isArray(words) || words.length === 0 || words.length > 1000 || !words.every((w) => typeof w === 'string' && w.length <= 100)) {
    state.fail(400, 'body must be {"words": [...]}: 1 to 1000 strings of at most 100 characters');
  }
}
