// Live charts of GET /metrics: a sampler that turns successive snapshots into per-second rates
// and gauges, and line charts drawn on a canvas (no library, nothing loaded from elsewhere).

const WINDOW = 120;  // samples kept per series (one a second: two minutes)
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#4b5563'];


// Sums of a snapshot's metric by a label (or '' for the whole family).
function byLabel(list, name, label) {
  const out = new Map();
  for (const m of list || []) {
    if (m.name !== name) continue;
    const k = label ? (m.labels || {})[label] || '' : '';
    const v = m.value ?? m.count ?? 0;
    const cur = out.get(k) || { value: 0, count: 0, sum: 0 };
    cur.value += v;
    cur.count += m.count || 0;
    cur.sum += m.sum_us ?? m.sum ?? 0;
    out.set(k, cur);
  }
  return out;
}

// What each chart shows, computed from the previous and the current snapshot over `dt` seconds.
// Each returns {series name: value}.
export const CHARTS = [
  {
    id: 'requests', title: 'Requests per second by operation', unit: '/s',
    compute: (prev, cur, dt) => rates(byLabel(prev.counters, 'fdyno_requests_total', 'operation'),
      byLabel(cur.counters, 'fdyno_requests_total', 'operation'), dt, 'value'),
  },
  {
    id: 'latency', title: 'Mean latency by operation', unit: ' ms', gaps: true,
    compute: (prev, cur) => {
      const a = byLabel(prev.histograms, 'fdyno_request_duration_seconds', 'operation');
      const b = byLabel(cur.histograms, 'fdyno_request_duration_seconds', 'operation');
      const out = {};
      for (const [k, v] of b) {
        const p = a.get(k) || { count: 0, sum: 0 };
        if (v.count > p.count) out[k] = (v.sum - p.sum) / (v.count - p.count) / 1000;
      }
      return out;
    },
  },
  {
    id: 'errors', title: 'Errors per second by type', unit: '/s',
    compute: (prev, cur, dt) => rates(byLabel(prev.counters, 'fdyno_errors_total', 'error_type'),
      byLabel(cur.counters, 'fdyno_errors_total', 'error_type'), dt, 'value'),
  },
  {
    id: 'commits', title: 'Engine commit batches', unit: '',
    compute: (prev, cur, dt) => {
      const a = byLabel(prev.histograms, 'fdyno_kv_commit_batch_transactions').get('');
      const b = byLabel(cur.histograms, 'fdyno_kv_commit_batch_transactions').get('');
      if (!a || !b) return {};
      const batches = b.count - a.count;
      return {
        'batches/s': batches / dt,
        'transactions per batch': batches > 0 ? (b.sum - a.sum) / batches : 0,
      };
    },
  },
  {
    id: 'engine', title: 'Engine bytes', unit: ' MB',
    compute: (prev, cur) => gauges(cur, {
      'SST files': 'fdyno_kv_sst_bytes', memtables: 'fdyno_kv_memtable_bytes',
    }, 1 / (1024 * 1024)),
  },
  {
    id: 'compactions', title: 'Compactions', unit: '',
    compute: (prev, cur, dt) => ({
      ...gauges(cur, { running: 'fdyno_kv_running_compactions' }),
      'finished/s': counterRate(prev, cur, 'fdyno_kv_compactions', dt),
      'MB written/s': counterRate(prev, cur, 'fdyno_kv_compaction_written_bytes', dt) / (1024 * 1024),
    }),
  },
  {
    id: 'progress', title: 'Backfills, exports and imports', unit: '',
    compute: (prev, cur, dt) => ({
      'backfilled items/s': counterRate(prev, cur, 'fdyno_index_backfill_items', dt),
      'exported items/s': counterRate(prev, cur, 'fdyno_export_items', dt),
      'imported items/s': counterRate(prev, cur, 'fdyno_import_items', dt),
      ...gauges(cur, { 'index work running': 'fdyno_index_work_running',
        'exports running': 'fdyno_exports_running' }),
    }),
  },
];

function rates(a, b, dt, field) {
  const out = {};
  for (const [k, v] of b) {
    const r = (v[field] - ((a.get(k) || {})[field] || 0)) / dt;
    if (r > 0) out[k] = r;
  }
  return out;
}

function counterRate(prev, cur, name, dt) {
  const a = byLabel(prev.counters, name).get('');
  const b = byLabel(cur.counters, name).get('');
  return a && b ? (b.value - a.value) / dt : 0;
}

function gauges(cur, names, scale = 1) {
  const out = {};
  for (const [series, name] of Object.entries(names)) {
    const g = byLabel(cur.gauges, name).get('');
    out[series] = g ? g.value * scale : 0;
  }
  return out;
}

// One chart: its series' last WINDOW values, drawn on `canvas`, with the latest values in
// `legend` (text the tests read).
export class LineChart {
  constructor(spec, canvas, legend) {
    this.spec = spec;
    this.canvas = canvas;
    this.legend = legend;
    this.series = new Map();  // name -> array of WINDOW values (null before the first)
    this.samples = 0;
  }

  push(values) {
    for (const name of Object.keys(values)) {
      if (!this.series.has(name)) this.series.set(name, new Array(this.samples).fill(this.missing()));
    }
    for (const [name, data] of this.series) {
      data.push(name in values ? values[name] : this.missing());
      if (data.length > WINDOW) data.shift();
    }
    this.samples = Math.min(this.samples + 1, WINDOW);
    this.canvas.dataset.samples = String(this.samples);
    this.draw();
  }

  // What a series without a value in a sample shows: nothing (a gap) for a chart of gaps, such
  // as a latency when no request was answered, else zero.
  missing() { return this.spec.gaps ? null : 0; }

  // The series with the largest recent values first, as many as there are colours.
  visible() {
    const recent = (d) => d.slice(-10).reduce((s, v) => s + v, 0);
    const all = [...this.series].sort((x, y) => recent(y[1]) - recent(x[1]));
    const shown = all.slice(0, COLORS.length - 1).filter(([, d]) => recent(d) > 0);
    return shown.length ? shown : all.slice(0, 1);
  }

  draw() {
    const c = this.canvas;
    if (c.clientWidth > 0 && c.width !== c.clientWidth) c.width = c.clientWidth;  // fills its box
    const ctx = c.getContext('2d');
    const w = c.width, h = c.height, pad = 28;
    ctx.clearRect(0, 0, w, h);
    const shown = this.visible();
    const highest = Math.max(0, ...shown.flatMap(([, d]) => d));
    const max = highest > 0 ? highest : 1;  // an idle chart still shows a scale
    ctx.strokeStyle = '#d1d5db';
    ctx.fillStyle = '#6b7280';
    ctx.font = '10px sans-serif';
    for (let i = 0; i <= 4; i++) {
      const y = pad / 2 + ((h - pad) * i) / 4;
      ctx.beginPath(); ctx.moveTo(pad, y); ctx.lineTo(w - 4, y); ctx.stroke();
      ctx.fillText(formatNumber(max * (1 - i / 4)), 2, y + 3);
    }
    shown.forEach(([, data], i) => {
      ctx.strokeStyle = COLORS[i];
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      let drawing = false;
      data.forEach((v, x) => {
        if (v === null) { drawing = false; return; }
        const px = pad + ((w - pad - 4) * (x + WINDOW - data.length)) / (WINDOW - 1);
        const py = pad / 2 + (h - pad) * (1 - v / max);
        if (drawing) ctx.lineTo(px, py); else ctx.moveTo(px, py);
        drawing = true;
      });
      ctx.stroke();
    });
    this.legend.replaceChildren(...shown.map(([name, data], i) => {
      const item = document.createElement('span');
      item.className = 'legend-item';
      item.style.color = COLORS[i];
      const last = data.findLast((v) => v !== null);
      item.textContent = `${name || 'all'} ${formatNumber(last ?? 0)}${this.spec.unit}`;
      return item;
    }));
  }
}

export function formatNumber(v) {
  if (!Number.isFinite(v)) return '0';
  if (Math.abs(v) >= 100) return v.toFixed(0);
  if (Math.abs(v) >= 1) return v.toFixed(1);
  return v.toFixed(2);
}

