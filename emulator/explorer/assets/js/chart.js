// The hottest partitions over time as an SVG line chart: entities written
// per second for the busiest partitions, the service's per-partition
// target (about 2,000 entities per second) as a dashed line, and the
// requests --throttle refused as bars in a strip underneath.

import { s, fmt } from './ui.js';

export const COLORS = ['#0072b2', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#332288', '#888888'];

const H = 300;
const X0 = 58;
const Y0 = 14;
const Y1 = 206;
const S0 = 220; // throttled strip
const S1 = 250;

function niceStep(max) {
  const raw = max / 5;
  const p = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

// partitionChart draws series [{label, values}] (one value per second,
// oldest first, the last one being now) over the last window seconds.
// width is the width the chart will be shown at, in CSS pixels: the
// drawing is made that wide so that its text keeps its size (an SVG
// scaled down to a narrow window shrinks its labels with it).
export function partitionChart({ series, throttled, target, window, title, width = 760 }) {
  const W = Math.max(320, Math.round(width));
  const X1 = W - 14;
  const cut = (v) => v.slice(-window);
  const lines = series.map((x) => ({ ...x, values: cut(x.values) }));
  const thr = cut(throttled || []);
  const peak = Math.max(0, ...lines.flatMap((l) => l.values));
  const step = niceStep(Math.max(target * 1.15, peak * 1.08));
  const ymax = Math.ceil(Math.max(target * 1.15, peak * 1.08) / step) * step;
  const x = (i) => X0 + (window <= 1 ? 0 : (i / (window - 1)) * (X1 - X0));
  const y = (v) => Y1 - (v / ymax) * (Y1 - Y0);
  const hottest = lines[0];
  const summary = hottest
    ? `${title}. Hottest partition ${hottest.label} peaked at ${fmt(Math.max(...hottest.values))} entities per second; the target is ${fmt(target)} per partition.`
    : `${title}. No writes in this window.`;

  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': summary, data: { peak: String(peak) } });
  // Grid and y axis.
  for (let v = 0; v <= ymax; v += step) {
    svg.append(
      s('line', { x1: X0, x2: X1, y1: y(v), y2: y(v), class: 'grid-line' }),
      s('text', { x: X0 - 6, y: y(v) + 4, class: 'tick', 'text-anchor': 'end', text: fmt(v) }),
    );
  }
  svg.append(s('text', { x: 14, y: (Y0 + Y1) / 2, class: 'axis-label', transform: `rotate(-90 14 ${(Y0 + Y1) / 2})`, 'text-anchor': 'middle', text: 'entities written / s' }));
  // x ticks: every quarter of the window.
  for (let k = 0; k <= 4; k++) {
    const ago = Math.round(window * (1 - k / 4));
    const i = Math.max(0, window - 1 - ago);
    svg.append(
      s('line', { x1: x(i), x2: x(i), y1: Y1, y2: S1, class: 'grid-line faint' }),
      s('text', { x: x(i), y: S1 + 18, class: 'tick', 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle', text: ago ? `−${ago} s` : 'now' }),
    );
  }
  svg.append(s('line', { x1: X0, x2: X1, y1: Y1, y2: Y1, class: 'axis' }));
  // The target line; its label is drawn last (below).
  svg.append(s('line', { x1: X0, x2: X1, y1: y(target), y2: y(target), class: 'target', data: { target: String(target) } }));
  // The series, the hottest drawn last (on top).
  lines.slice().reverse().forEach((l) => {
    const i = lines.indexOf(l);
    const pts = l.values.map((v, k) => `${x(k).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    svg.append(s('polyline', { points: pts, class: 'series', stroke: l.color || COLORS[i % COLORS.length], data: { partition: l.label } },
      s('title', { text: `${l.label}: peak ${fmt(Math.max(...l.values))}/s` })));
  });
  // The target's label at the left end of its line, where the oldest
  // seconds are (the newest, at the right, are where traffic usually is),
  // over the series with a halo so that a line crossing it leaves it
  // readable.
  svg.append(s('text', { x: X0 + 6, y: y(target) - 6, class: 'target-label', 'text-anchor': 'start', text: `target ${fmt(target)}/s per partition` }));
  // Throttled requests.
  const tmax = Math.max(0, ...thr);
  svg.append(s('text', { x: X0 - 6, y: (S0 + S1) / 2 + 4, class: 'tick', 'text-anchor': 'end', text: 'throttled' }));
  svg.append(s('line', { x1: X0, x2: X1, y1: S1, y2: S1, class: 'axis' }));
  const bw = Math.max(1, (X1 - X0) / Math.max(1, window) - 0.5);
  thr.forEach((n, k) => {
    if (!n) return;
    const hgt = (n / tmax) * (S1 - S0);
    svg.append(s('rect', { x: x(k) - bw / 2, y: S1 - hgt, width: bw, height: hgt, class: 'throttled' }, s('title', { text: `${fmt(n)} throttled, ${window - 1 - k} s ago` })));
  });
  if (tmax) svg.append(s('text', { x: X0 + 4, y: S0 + 10, class: 'tick', text: `up to ${fmt(tmax)} refused/s` }));
  return svg;
}
