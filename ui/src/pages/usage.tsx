import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api, download } from '../api';
import { cost, describe, ms, num } from '../format';

type Row = Record<string, string | number | null | undefined>;

const GROUPS = ['day', 'agent', 'action', 'model', 'subject'] as const;
/** Every measure GET /api/v1/usage may answer; the ones a server does not send are left out. */
const MEASURES = [
  ['turns', 'Turns'],
  ['inputTokens', 'Tokens in'],
  ['outputTokens', 'Tokens out'],
  ['estimatedCost', 'Cost'],
  ['errors', 'Errors'],
  ['latencyP50Ms', 'Latency p50 (ms)'],
  ['latencyP95Ms', 'Latency p95 (ms)'],
  ['conversations', 'Conversations'],
  ['modelCalls', 'Model calls'],
  ['embeddingTokens', 'Embedding tokens'],
  ['embeddingCost', 'Embedding cost'],
] as const;
/** The charts: measures of one unit each, at most two side by side. */
const VIEWS: { name: string; label: string; keys: string[]; format: (v: number) => string }[] = [
  { name: 'tokens', label: 'tokens', keys: ['inputTokens', 'outputTokens'], format: (v) => num(v) },
  { name: 'embedding', label: 'embedding tokens', keys: ['embeddingTokens'], format: (v) => num(v) },
  { name: 'turns', label: 'turns', keys: ['turns', 'errors'], format: (v) => num(v) },
  { name: 'cost', label: 'cost ($)', keys: ['estimatedCost'], format: (v) => cost(v) },
  { name: 'latency', label: 'latency (ms)', keys: ['latencyP50Ms', 'latencyP95Ms'], format: (v) => num(v) },
  { name: 'volume', label: 'conversations, calls', keys: ['conversations', 'modelCalls'], format: (v) => num(v) },
];
const COLORS = ['#1f6feb', '#bf3989', '#1a7f37', '#9a6700', '#cf222e', '#8250df', '#0969da', '#57606a', '#116329'];

const formatOf = (key: string) => (key.endsWith('Cost') ? cost : key.startsWith('latency') ? ms : num);

const toCsv = (group: string, keys: string[], rows: Row[]) =>
  [[group, ...keys], ...rows.map((r) => [r[group], ...keys.map((k) => r[k])])]
    .map((cells) =>
      cells
        .map((c) =>
          c === null || c === undefined
            ? ''
            : /[",\n]/.test(String(c))
              ? `"${String(c).replace(/"/g, '""')}"`
              : String(c),
        )
        .join(','),
    )
    .join('\n');

/** Usage charts (uPlot) by day, agent, action, model or subject, with the numbers as a table and CSV. */
export function UsagePage() {
  const [group, setGroup] = useState<(typeof GROUPS)[number]>('day');
  const [view, setView] = useState('tokens');
  // The rows with the grouping they were asked for, so nothing draws one group's rows as another's.
  const [answer, setAnswer] = useState<{ group: string; rows: Row[] } | null>(null);
  const rows = answer?.group === group ? answer.rows : null;
  const [error, setError] = useState<string | null>(null);
  const chart = useRef<HTMLDivElement>(null);

  useEffect(() => {
    setError(null);
    api<Row[]>('/api/v1/usage', { query: { groupBy: group } })
      .then((r) => setAnswer({ group, rows: r }))
      .catch((err: unknown) => setError(describe(err)));
  }, [group]);

  const measures = MEASURES.filter(([k]) => rows?.some((r) => typeof r[k] === 'number'));
  const keys: string[] = measures.map(([k]) => k);

  const views = VIEWS.filter((v) => v.keys.some((k) => keys.includes(k)));
  const shown = views.find((v) => v.name === view) ?? views[0];

  useEffect(() => {
    const el = chart.current;
    if (!el || !rows || rows.length === 0 || !shown) return;
    const series = (k: string) => rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null));
    // Every measure's points, for whoever reads the chart's data (the browser tests do).
    el.dataset.points = JSON.stringify({
      labels: rows.map((r) => r[group]),
      series: Object.fromEntries(keys.map((k) => [k, series(k)])),
    });
    const drawn = shown.keys.filter((k) => keys.includes(k));
    const label = (t: number) => String(rows[Math.round(t)]?.[group] ?? '');
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 320,
        scales: {
          x: { time: false, range: [-0.5, rows.length - 0.5] },
          // Bars start at zero, so their heights compare.
          y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        axes: [
          { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? label(t) : '')), incrs: [1] },
          { label: shown.label, size: 70, values: (_u, ticks) => ticks.map((t) => shown.format(t)) },
        ],
        series: [
          { label: group, value: (_u: uPlot, v: number | null) => (v === null ? '—' : label(v)) },
          ...drawn.map((k, i) => ({
            label: MEASURES.find(([m]) => m === k)![1],
            stroke: COLORS[i],
            fill: `${COLORS[i]}99`,
            width: 1,
            paths: uPlot.paths.bars!({
              size: [drawn.length > 1 ? 0.35 : 0.6, 80],
              align: drawn.length > 1 ? (i === 0 ? -1 : 1) : 0,
            }),
            points: { show: false },
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : shown.format(v)),
          })),
        ],
      },
      [rows.map((_, i) => i), ...drawn.map(series)] as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [answer, group, shown?.name]);

  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <div class="toolbar">
        <label>
          Group by
          <select
            name="groupBy"
            value={group}
            onChange={(e) => setGroup(e.currentTarget.value as (typeof GROUPS)[number])}
          >
            {GROUPS.map((g) => (
              <option key={g} value={g}>
                {g}
              </option>
            ))}
          </select>
        </label>
        <label>
          Chart
          <select name="chart" value={shown?.name} onChange={(e) => setView(e.currentTarget.value)}>
            {views.map((v) => (
              <option key={v.name} value={v.name}>
                {v.name}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          disabled={!rows?.length}
          onClick={() => rows && download(`usage-by-${group}.csv`, 'text/csv', `${toCsv(group, keys, rows)}\n`)}
        >
          Download CSV
        </button>
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {rows && rows.length === 0 && <p class="muted">No usage recorded yet.</p>}
      <figure class="chart-figure">
        <div
          ref={chart}
          class="chart"
          data-testid="usage-chart"
          data-group={rows ? group : undefined}
          role="img"
          aria-label={`Usage by ${group}`}
        />
      </figure>
      {rows && rows.length > 0 && (
        <table class="list">
          <caption>Usage by {group}</caption>
          <thead>
            <tr>
              <th scope="col">{group}</th>
              {measures.map(([k, label]) => (
                <th scope="col" key={k}>
                  {label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={String(r[group])}>
                <th scope="row">{String(r[group])}</th>
                {keys.map((k) => (
                  <td key={k}>{typeof r[k] === 'number' ? formatOf(k)(r[k] as number) : '—'}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
