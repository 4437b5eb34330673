import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { describe, ms, num } from '../format';

interface Status {
  dependencies: Record<string, string>;
  projectionLagMs: Record<string, number | null>;
  queueDepth: Record<string, number | null>;
  runningTurns: number;
  breakers: Record<string, string>;
  at: string;
}

const REFRESH_MS = 5000;

function Table({
  title,
  rows,
  render,
}: {
  title: string;
  rows: Record<string, unknown>;
  render: (v: never) => string;
}) {
  const entries = Object.entries(rows);
  return (
    <table class="list compact">
      <caption>{title}</caption>
      <tbody>
        {entries.length === 0 && (
          <tr>
            <td class="muted">none yet</td>
          </tr>
        )}
        {entries.map(([k, v]) => (
          <tr key={k}>
            <th scope="row">{k}</th>
            <td class={`v-${String(v)}`}>{render(v as never)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Dependencies, projection lag, queue depth, running turns and breakers (GET /api/v1/status). */
export function HealthPage() {
  const [status, setStatus] = useState<Status | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    const load = () =>
      api<Status>('/api/v1/status')
        .then((s) => !stopped && (setStatus(s), setError(null)))
        .catch((err: unknown) => !stopped && setError(describe(err)));
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, []);
  return (
    <section aria-labelledby="health-title">
      <h1 id="health-title">Health</h1>
      {error && (
        <p role="alert" class="error" data-testid="refused">
          {error}
        </p>
      )}
      {status && (
        <div class="grid" data-testid="health">
          <Table title="Dependencies" rows={status.dependencies} render={(v: string) => v} />
          <Table title="Projection lag" rows={status.projectionLagMs} render={(v: number | null) => ms(v)} />
          <Table title="Queue depth" rows={status.queueDepth} render={(v: number | null) => num(v)} />
          <Table title="Breakers by provider" rows={status.breakers} render={(v: string) => v} />
          <p>
            Running turns: <strong data-testid="running">{status.runningTurns}</strong>
          </p>
          <p class="muted">As of {new Date(status.at).toLocaleTimeString()}</p>
        </div>
      )}
    </section>
  );
}
