export default (state) => {
  state.message.headers = { 'x-big': 'x'.repeat(10 * 2 ** 20) };
  state.message.body = 'ok';
};
