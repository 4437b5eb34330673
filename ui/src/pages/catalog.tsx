import { useEffect, useState } from 'preact/hooks';
import { api, can, type Who } from '../api';
import { describe } from '../format';

type Row = Record<string, unknown>;

const COLLECTIONS = [
  ['agents', 'Agents'],
  ['actions', 'Actions'],
  ['tools', 'Tools'],
  ['models', 'Models'],
  ['mcp-clients', 'MCP clients'],
] as const;

/** Field names that could hold a credential: never shown, even if a server sent one. */
const SECRET = /(key|secret|password|token|credential|authorization|headers|env)$/i;

const show = (v: unknown) =>
  v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);

/**
 * The catalog. Admins and auditors browse every collection (GET /api/v1/catalog/<collection>);
 * a client sees the actions it may use. Admins apply a YAML bundle: a dry run's diff first,
 * then the same bundle for real once confirmed.
 */
export function CatalogPage({ who }: { who: Who }) {
  const reader = can(who, 'admin', 'auditor');
  const [collection, setCollection] = useState<string>(reader ? 'agents' : 'actions');
  const [rows, setRows] = useState<Row[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    setRows(null);
    setError(null);
    api<Row[]>(reader ? `/api/v1/catalog/${collection}` : '/api/v1/actions')
      .then(setRows)
      .catch((err: unknown) => setError(describe(err)));
  }, [collection]);

  const columns = rows
    ? [...new Set(rows.flatMap((r) => Object.keys(r)))].filter((c) => !SECRET.test(c)).slice(0, 8)
    : [];
  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Catalog</h1>
      {reader && (
        <div class="tabs" role="group" aria-label="Collections">
          {COLLECTIONS.map(([name, label]) => (
            <button key={name} type="button" aria-pressed={collection === name} onClick={() => setCollection(name)}>
              {label}
            </button>
          ))}
        </div>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {rows && (
        <table class="list" data-testid="catalog">
          <caption>{reader ? COLLECTIONS.find(([n]) => n === collection)?.[1] : 'Actions you may use'}</caption>
          <thead>
            <tr>
              {columns.map((c) => (
                <th scope="col" key={c}>
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={i}>
                {columns.map((c) => (
                  <td key={c}>{show(r[c]).slice(0, 160)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {can(who, 'admin') && <ApplyBundle />}
    </section>
  );
}

/** What an apply changes (or would): per entity, the keys created, updated and left unchanged. */
interface Applied {
  dryRun: boolean;
  changes: Record<string, { created: string[]; updated: string[]; unchanged: string[] }>;
}

function ApplyBundle() {
  const [yaml, setYaml] = useState('');
  const [diff, setDiff] = useState<Applied | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const send = (dryRun: boolean) =>
    api<Applied>('/api/v1/catalog/apply', {
      method: 'POST',
      query: { dryRun },
      raw: { text: yaml, type: 'application/yaml' },
    });
  return (
    <section class="apply" aria-labelledby="apply-title">
      <h2 id="apply-title">Apply a bundle</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setOutcome(null);
          send(true)
            .then(setDiff)
            .catch((err: unknown) => {
              setDiff(null);
              setOutcome(describe(err));
            });
        }}
      >
        <label for="bundle">YAML bundle</label>
        <textarea
          id="bundle"
          rows={10}
          value={yaml}
          onInput={(e) => {
            setYaml(e.currentTarget.value);
            setDiff(null);
          }}
        />
        <button type="submit" disabled={!yaml.trim()}>
          Dry run
        </button>
      </form>
      {diff && (
        <div data-testid="diff">
          <table class="list">
            <caption>What it would change (dry run)</caption>
            <thead>
              <tr>
                <th scope="col">Entity</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                <th scope="col">Unchanged</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(diff.changes).map(([entity, c]) => (
                <tr key={entity}>
                  <th scope="row">{entity}</th>
                  <td>{c.created.join(', ')}</td>
                  <td>{c.updated.join(', ')}</td>
                  <td>{c.unchanged.length}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <button
            type="button"
            onClick={() =>
              send(false)
                .then(() => {
                  setDiff(null);
                  setOutcome('Applied.');
                })
                .catch((err: unknown) => setOutcome(describe(err)))
            }
          >
            Confirm and apply
          </button>
        </div>
      )}
      <p role="status">{outcome}</p>
    </section>
  );
}
