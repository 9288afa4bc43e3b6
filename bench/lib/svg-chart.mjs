/**
 * A line chart as an SVG document, written by hand so the bench needs no
 * plotting dependency: one line per series (events/s over seconds since its
 * phase started), axes with round ticks, a legend. GitHub renders it inline
 * from the README.
 *
 *   lines: [{ label, points: [{ t, perS }] }]
 */
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
const W = 960;
const H = 420;
const PAD = { left: 70, right: 230, top: 40, bottom: 50 };

/** 1, 2 or 5 × a power of ten: a tick step giving about `n` ticks over `max`. */
function niceStep(max, n) {
  const raw = max / n;
  const pow = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw);
}

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n) => (n >= 1000 ? `${(n / 1000).toFixed(n % 1000 === 0 ? 0 : 1)}k` : String(n));

export function lineChart({ title, lines, xLabel = 'seconds since the phase started', yLabel = 'events/s' }) {
  const drawn = lines.filter((l) => l.points.length);
  const maxT = Math.max(1, ...drawn.flatMap((l) => l.points.map((p) => p.t)));
  const maxY = Math.max(1, ...drawn.flatMap((l) => l.points.map((p) => p.perS)));
  const xStep = niceStep(maxT, 8);
  const yStep = niceStep(maxY, 6);
  const xMax = Math.ceil(maxT / xStep) * xStep;
  const yMax = Math.ceil(maxY / yStep) * yStep;
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (t) => PAD.left + (t / xMax) * plotW;
  const y = (v) => PAD.top + plotH - (v / yMax) * plotH;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${PAD.left}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
  ];
  for (let v = 0; v <= yMax + 1e-9; v += yStep) {
    out.push(`<line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${PAD.left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${fmt(Math.round(v))}</text>`);
  }
  for (let t = 0; t <= xMax + 1e-9; t += xStep) {
    out.push(`<line x1="${x(t).toFixed(1)}" x2="${x(t).toFixed(1)}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH + 5}" stroke="#333"/>`);
    out.push(`<text x="${x(t).toFixed(1)}" y="${PAD.top + plotH + 18}" text-anchor="middle">${Math.round(t * 10) / 10}</text>`);
  }
  out.push(`<line x1="${PAD.left}" x2="${PAD.left + plotW}" y1="${PAD.top + plotH}" y2="${PAD.top + plotH}" stroke="#333"/>`);
  out.push(`<line x1="${PAD.left}" x2="${PAD.left}" y1="${PAD.top}" y2="${PAD.top + plotH}" stroke="#333"/>`);
  out.push(`<text x="${PAD.left + plotW / 2}" y="${H - 10}" text-anchor="middle">${esc(xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`);
  drawn.forEach((line, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = line.points.map((p) => `${x(p.t).toFixed(1)},${y(p.perS).toFixed(1)}`).join(' ');
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.8" points="${pts}"/>`);
    const ly = PAD.top + 10 + i * 20;
    out.push(`<line x1="${W - PAD.right + 15}" x2="${W - PAD.right + 40}" y1="${ly}" y2="${ly}" stroke="${color}" stroke-width="3"/>`);
    out.push(`<text x="${W - PAD.right + 46}" y="${ly + 4}">${esc(line.label)}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
