// The custom-directive variant of Ping: runs in the API's isolate (a fresh context per call) and
// answers the same JSON, so the difference to GET /flow/ping is the sandbox call itself.
export default function Pong(state) {
  state.message.body = { message: 'pong' };
}
