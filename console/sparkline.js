/**
 * A sparkline on a small canvas: one value per second, scaled to its own maximum. Drawn on a
 * canvas rather than as SVG so that 50 rows redrawn every second cost next to nothing.
 */
export function sparkline(width = 120, height = 24) {
  const canvas = document.createElement('canvas');
  const ratio = window.devicePixelRatio || 1;
  canvas.width = width * ratio;
  canvas.height = height * ratio;
  canvas.className = 'sparkline';
  canvas.setAttribute('role', 'img');
  const context = canvas.getContext('2d');
  context.scale(ratio, ratio);

  return {
    canvas,
    draw(values) {
      context.clearRect(0, 0, width, height);
      if (values === null || values.length < 2) {
        canvas.setAttribute('aria-label', 'no requests in the last five minutes');
        return;
      }
      const max = Math.max(1, ...values);
      const step = width / (values.length - 1);
      const y = (v) => height - 1 - (v / max) * (height - 3);
      context.beginPath();
      context.moveTo(0, height);
      values.forEach((v, i) => context.lineTo(i * step, y(v)));
      context.lineTo(width, height);
      context.closePath();
      context.fillStyle = 'rgba(37, 99, 235, 0.15)';
      context.fill();
      context.beginPath();
      values.forEach((v, i) => (i === 0 ? context.moveTo(0, y(v)) : context.lineTo(i * step, y(v))));
      context.strokeStyle = '#2563eb';
      context.lineWidth = 1.25;
      context.stroke();
      canvas.setAttribute('aria-label', `requests per second over the last minute, up to ${max}`);
    },
  };
}
