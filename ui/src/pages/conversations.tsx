import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { cost, describe, num, STATUS_NAMES, when } from '../format';
import { BASE, onLink } from '../router';

interface Conversation {
  conversationUuid: string;
  owner: string;
  llmAgent: string;
  llmAction: string;
  llmProcessStatus: string;
  biInputTokenCount: number;
  biOutputTokenCount: number;
  biEstimatedCost: number;
  createdAt: string;
}
interface Page {
  items: Conversation[];
  nextCursor: string | null;
}
interface Counts {
  total: number;
  byStatus: Record<string, number>;
}
interface Filters {
  status: string;
  agentCode: string;
  actionCode: string;
  subject: string;
  text: string;
  from: string;
  to: string;
}

const EMPTY: Filters = { status: '', agentCode: '', actionCode: '', subject: '', text: '', from: '', to: '' };
const POLL_MS = 3000;
const PAGE_SIZE = 50;

/** `datetime-local` values are local times; the API takes instants. */
const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);

/** The conversations list: filters, counts by status, cursor paging; it polls the projections to stay live. */
export function ConversationsPage() {
  const [draft, setDraft] = useState<Filters>(EMPTY);
  const [filters, setFilters] = useState<Filters>(EMPTY);
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState<Page | null>(null);
  const [counts, setCounts] = useState<Counts | null>(null);
  const [error, setError] = useState<string | null>(null);
  const cursor = cursors.at(-1);

  useEffect(() => {
    let stopped = false;
    const query = {
      agentCode: filters.agentCode,
      actionCode: filters.actionCode,
      subject: filters.subject,
      text: filters.text,
      from: instant(filters.from),
      to: instant(filters.to),
    };
    const load = async () => {
      try {
        const [p, c] = await Promise.all([
          api<Page>('/api/v1/conversations', { query: { ...query, status: filters.status, limit: PAGE_SIZE, cursor } }),
          api<Counts>('/api/v1/conversations/counts', { query }),
        ]);
        if (stopped) return;
        setPage(p);
        setCounts(c);
        setError(null);
      } catch (err) {
        if (!stopped) setError(describe(err));
      }
    };
    void load();
    const timer = setInterval(() => void load(), POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [filters, cursor]);

  const apply = (next: Filters) => {
    setFilters(next);
    setCursors([undefined]);
  };
  const field = (name: keyof Filters, label: string, time = false) => {
    const onInput = (e: { currentTarget: HTMLInputElement }) => setDraft({ ...draft, [name]: e.currentTarget.value });
    return (
      <label>
        {label}
        {time ? (
          <input type="datetime-local" name={name} value={draft[name]} onInput={onInput} />
        ) : (
          <input type="text" name={name} value={draft[name]} onInput={onInput} />
        )}
      </label>
    );
  };

  return (
    <section aria-labelledby="conversations-title">
      <h1 id="conversations-title">Conversations</h1>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          apply(draft);
        }}
      >
        <label>
          Status
          <select
            name="status"
            value={draft.status}
            onChange={(e) => setDraft({ ...draft, status: e.currentTarget.value })}
          >
            <option value="">any</option>
            {Object.entries(STATUS_NAMES).map(([code, name]) => (
              <option key={code} value={code}>
                {name} ({code})
              </option>
            ))}
          </select>
        </label>
        {field('agentCode', 'Agent')}
        {field('actionCode', 'Action')}
        {field('subject', 'Subject')}
        {field('text', 'Text')}
        {field('from', 'From', true)}
        {field('to', 'To', true)}
        <button type="submit">Apply</button>
        <button
          type="button"
          class="quiet"
          onClick={() => {
            setDraft(EMPTY);
            apply(EMPTY);
          }}
        >
          Clear
        </button>
      </form>

      {counts && (
        <ul class="counts" aria-label="Counts by status" data-testid="counts">
          <li>
            <button type="button" class="chip" onClick={() => apply({ ...filters, status: '' })}>
              all <strong>{num(counts.total)}</strong>
            </button>
          </li>
          {Object.entries(counts.byStatus).map(([status, n]) => (
            <li key={status}>
              <button
                type="button"
                class="chip"
                data-status={status}
                aria-pressed={filters.status === status}
                onClick={() => {
                  setDraft({ ...filters, status });
                  apply({ ...filters, status });
                }}
              >
                {STATUS_NAMES[status] ?? status} <strong>{num(n)}</strong>
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {page && (
        <table class="list" data-testid="conversations">
          <caption class="visually-hidden">Conversations, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Conversation</th>
              <th scope="col">Status</th>
              <th scope="col">Agent</th>
              <th scope="col">Action</th>
              <th scope="col">Subject</th>
              <th scope="col">Started</th>
              <th scope="col">Tokens in / out</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {page.items.map((c) => (
              <tr key={c.conversationUuid} data-id={c.conversationUuid}>
                <td>
                  <a href={`${BASE}/conversations/${c.conversationUuid}`} onClick={onLink} class="mono">
                    {c.conversationUuid}
                  </a>
                </td>
                <td>
                  <span class={`status s-${c.llmProcessStatus}`}>
                    {STATUS_NAMES[c.llmProcessStatus] ?? c.llmProcessStatus}
                  </span>
                </td>
                <td>{c.llmAgent}</td>
                <td>{c.llmAction}</td>
                <td>{c.owner}</td>
                <td>{when(c.createdAt)}</td>
                <td>
                  {num(c.biInputTokenCount)} / {num(c.biOutputTokenCount)}
                </td>
                <td>{cost(c.biEstimatedCost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page && page.items.length === 0 && <p class="muted">No conversation matches.</p>}
      <nav class="pager" aria-label="Pages of conversations">
        <button type="button" disabled={cursors.length < 2} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button
          type="button"
          disabled={!page?.nextCursor}
          onClick={() => page?.nextCursor && setCursors([...cursors, page.nextCursor])}
        >
          Older
        </button>
      </nav>
    </section>
  );
}
