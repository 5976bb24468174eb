// The custom-directive variant of Ping: runs in the API's sandbox (its isolate, one long-lived
// context per thread) and answers the same JSON, so the difference to GET /flow/ping is the call.
export default function Pong(state) {
  state.message.body = { message: 'pong' };
}
