import { h } from './dom.js';

/**
 * The live latency chart of an API (uPlot, vendored by the build into vendor/): p50 and p99 in ms
 * on the left axis, requests per second on the right, one point per second over five minutes, from
 * the `series` of GET /anvil/api/<key>/stats. Loaded on demand, so the rest of the page works
 * without it (and says so) when vendor/ is missing.
 */
export function latencyChart(container) {
  let plot = null;
  let failed = false;
  const holder = h('div', { class: 'chart', id: 'latency-chart' });
  container.append(holder);
  const library = import('./vendor/uPlot.esm.js').then(
    (module) => module.default,
    () => {
      failed = true;
      holder.append(
        h('p', { class: 'error' }, 'The chart library is missing (console/vendor/ is written by npm run build).'),
      );
      return null;
    },
  );
  const resize = () => plot?.setSize({ width: holder.clientWidth, height: 260 });
  window.addEventListener('resize', resize);

  return {
    async update(series) {
      const uPlot = await library;
      if (uPlot === null || failed) return;
      // The last point is the second still counting: left out, or every chart would end in a dip.
      const end = series.t.length - 1;
      const data = [
        series.t.slice(0, end),
        series.p50Ms.slice(0, end),
        series.p99Ms.slice(0, end),
        series.requests.slice(0, end),
      ];
      if (plot === null) plot = new uPlot(options(holder.clientWidth || 800), data, holder);
      else plot.setData(data);
    },
    stop() {
      window.removeEventListener('resize', resize);
      plot?.destroy();
      plot = null;
    },
  };
}

/** Unix seconds → local HH:MM:SS (uPlot's default puts the date on the first tick, over its neighbour). */
function clock(seconds) {
  const date = new Date(seconds * 1000);
  const pad = (n) => String(n).padStart(2, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function options(width) {
  const msValue = (_, v) => (v === null || v === undefined ? '–' : `${v.toFixed(1)} ms`);
  return {
    width,
    height: 260,
    cursor: { drag: { x: false, y: false } },
    scales: {
      x: { time: true },
      ms: { auto: true },
      rps: { auto: true, range: (_, min, max) => [0, Math.max(1, max)] },
    },
    series: [
      {},
      { label: 'p50', scale: 'ms', stroke: '#2563eb', width: 1.5, value: msValue },
      { label: 'p99', scale: 'ms', stroke: '#dc2626', width: 1.5, value: msValue },
      {
        label: 'req/s',
        scale: 'rps',
        stroke: '#16a34a',
        width: 1,
        fill: 'rgba(22, 163, 74, 0.08)',
        value: (_, v) => (v === null || v === undefined ? '–' : String(v)),
      },
    ],
    axes: [
      { values: (_, splits) => splits.map(clock) },
      { scale: 'ms', label: 'latency (ms)', size: 60 },
      { scale: 'rps', side: 1, label: 'req/s', grid: { show: false }, size: 50 },
    ],
  };
}
