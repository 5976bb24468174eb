export default (state, config) => {
  state.message.headers = { 'content-type': 'application/octet-stream' };
  state.message.body = 'b'.repeat(Number(config.mib) * 2 ** 20);
};
