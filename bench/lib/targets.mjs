// Targets of the benchmarks and how a measured figure compares with one, plus number formatting.

/**
 * A target check: `op` is '>=' , '<=' or '<'. Returns { name, measured, display, target, met, by }
 * where `by` says how far from the limit, relative to it ("met, 20 % above the limit", "missed,
 * 45.0× the limit"), and `display`/`target` are formatted with `format`.
 */
export function checkTarget({ name, measured, op, limit, format = (x) => fmt(x, 2), note = '' }) {
  const ok = Number.isFinite(measured);
  const met = ok && (op === '>=' ? measured >= limit : op === '<=' ? measured <= limit : measured < limit);
  // How far from the limit, relative to it.
  const r = measured / limit;
  let by = 'not measured';
  if (ok && op === '>=')
    by = met ? `met, ${fmt((r - 1) * 100, 0)} % above the limit` : `missed, ${fmt((1 - r) * 100, 0)} % below the limit`;
  else if (ok)
    by = met
      ? `met, ${fmt((1 - r) * 100, 0)} % under the limit`
      : r < 2
        ? `missed, ${fmt((r - 1) * 100, 0)} % over the limit`
        : `missed, ${fmt(r, 1)}× the limit`;
  return {
    name,
    measured,
    display: ok ? format(measured) : 'n/a',
    target: `${op === '>=' ? '≥' : op === '<=' ? '≤' : '<'} ${format(limit)}`,
    met,
    by,
    note,
  };
}

/** A number with `digits` decimals and thin-space thousands separators. */
export function fmt(x, digits = 0) {
  if (!Number.isFinite(x)) return 'n/a';
  const [int, dec] = Math.abs(x).toFixed(digits).split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
  return `${x < 0 ? '−' : ''}${grouped}${dec ? `.${dec}` : ''}`;
}

export const ms = (x) => `${fmt(x, 2)} ms`;
export const ratio = (x) => `${fmt(x, 2)}×`;
export const rps = (x) => `${fmt(x, 0)} req/s`;
export const kib = (x) => `${fmt(x, 0)} KiB`;
export const mib = (x) => `${fmt(x, 1)} MiB`;
