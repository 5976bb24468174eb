// A report not written yet is pending (the job may be waiting, running, or retrying).
export default function (state) {
  const report = state.memory.get('report');
  state.message.headers = { 'content-type': 'application/json' };
  state.message.body = report === null ? { state: 'pending' } : { state: 'done', ...report };
}
