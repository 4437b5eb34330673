import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api, download } from '../api';
import { describe, num } from '../format';

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
] as const;
const COLORS = ['#1f6feb', '#bf3989', '#1a7f37', '#9a6700', '#cf222e', '#8250df', '#0969da', '#57606a', '#116329'];

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
  const keys = measures.map(([k]) => k);

  useEffect(() => {
    const el = chart.current;
    if (!el || !rows || rows.length === 0) return;
    const x =
      group === 'day' ? rows.map((r) => Date.parse(`${r.day as string}T00:00:00Z`) / 1000) : rows.map((_, i) => i);
    const data = [x, ...keys.map((k) => rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null)))];
    el.dataset.points = JSON.stringify({
      labels: rows.map((r) => r[group]),
      series: Object.fromEntries(keys.map((k, i) => [k, data[i + 1]])),
    });
    const bars = group !== 'day' ? uPlot.paths.bars!({ size: [0.6, 60] }) : undefined;
    const plot = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 320,
        scales: { x: { time: group === 'day' } },
        axes: [
          group === 'day'
            ? {}
            : { values: (_u, ticks) => ticks.map((t) => String(rows[Math.round(t)]?.[group] ?? '')) },
          { label: 'tokens, turns, calls' },
          { side: 1, scale: 'ms', label: 'ms / $', grid: { show: false } },
        ],
        series: [
          { label: group },
          ...measures.map(([k, label], i) => ({
            label,
            stroke: COLORS[i],
            width: 2,
            scale: k.startsWith('latency') || k === 'estimatedCost' ? 'ms' : 'y',
            ...(bars ? { paths: bars, fill: `${COLORS[i]}55` } : {}),
            value: (_u: uPlot, v: number | null) => (v === null ? '—' : num(v)),
          })),
        ],
      },
      data as uPlot.AlignedData,
      el,
    );
    return () => plot.destroy();
  }, [answer, group]);

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
                  <td key={k}>{typeof r[k] === 'number' ? num(r[k] as number) : '—'}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
