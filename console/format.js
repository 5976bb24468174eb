// How figures read in the console.

export function rate(perSecond) {
  if (perSecond === null || perSecond === undefined) return '–';
  if (perSecond === 0) return '0';
  if (perSecond < 0.1) return perSecond.toFixed(3);
  if (perSecond < 10) return perSecond.toFixed(2);
  if (perSecond < 1000) return perSecond.toFixed(1);
  return Math.round(perSecond).toLocaleString('en');
}

export function ms(value) {
  if (value === null || value === undefined) return '–';
  if (value < 1) return `${value.toFixed(2)} ms`;
  if (value < 100) return `${value.toFixed(1)} ms`;
  if (value < 10_000) return `${Math.round(value)} ms`;
  return `${(value / 1000).toFixed(1)} s`;
}

export function percent(ratio) {
  if (ratio === null || ratio === undefined) return '–';
  if (ratio === 0) return '0%';
  if (ratio < 0.001) return '<0.1%';
  return `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)}%`;
}

export function count(n) {
  return n === null || n === undefined ? '–' : n.toLocaleString('en');
}

export function duration(seconds) {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min`;
  return `${Math.floor(seconds / 86400)} d ${Math.floor((seconds % 86400) / 3600)} h`;
}

/** A release id (r-YYYYMMDD-HHMMSSmmm-xxxx, release-id.ts) → its time, or null for another shape. */
export function releaseTime(release) {
  const m = /^r-(\d{4})(\d{2})(\d{2})-(\d{2})(\d{2})(\d{2})(\d{3})-/.exec(release);
  if (m === null) return null;
  return new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], +m[7]));
}

/** An ISO time (or Date) as local "YYYY-MM-DD HH:MM:SS". */
export function when(time) {
  const date = time instanceof Date ? time : new Date(time);
  if (Number.isNaN(date.getTime())) return String(time);
  const pad = (n) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}
