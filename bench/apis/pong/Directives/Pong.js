export default function Pong(state) {
  state.message.body = { message: 'pong' };
}
