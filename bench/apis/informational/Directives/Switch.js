export default (state) => {
  state.message.status = 101;
  state.message.body = 'x';
};
