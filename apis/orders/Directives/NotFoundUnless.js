// 404 when `value` is null (the row was not found).
export default function (state, config) {
  if (config.value === null || config.value === undefined) state.fail(404, 'no such order');
}
