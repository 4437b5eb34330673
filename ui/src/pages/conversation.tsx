import { useEffect, useRef, useState } from 'preact/hooks';
import { api, can, download, readSse, type Who } from '../api';
import { cost, describe, num, STATUS_NAMES } from '../format';
import { Timeline, type Delta, type Item, type StoredEvent } from '../timeline';
import { AnswerForm } from './answer-form';
import { TimelineItem } from './timeline-item';
import { VirtualList } from './virtual-list';

interface Conversation {
  conversationUuid: string;
  owner: string;
  llmAgent: string;
  llmAction: string;
  llmProcessStatus: string;
  biInputTokenCount: number;
  biOutputTokenCount: number;
  biEstimatedCost: number;
  errorCode: string | null;
  model: { code: string; provider: string };
}

interface Verified {
  ok: boolean;
  checked: number;
  firstBadRevision: number | null;
  reason: string | null;
}

const RECONNECT_MS = 2000;

/** Follows the conversation's SSE stream into `timeline`, reconnecting after the last revision seen. */
function useTimeline(id: string): { timeline: Timeline; version: number; error: string | null } {
  const [timeline] = useState(() => new Timeline());
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const stop = new AbortController();
    let frame = 0;
    const schedule = () => {
      frame ||= requestAnimationFrame(() => {
        frame = 0;
        setVersion(timeline.version);
      });
    };
    const follow = async () => {
      while (!stop.signal.aborted) {
        try {
          const path = `/api/v1/conversations/${id}/stream?lastEventId=${timeline.lastRevision}`;
          await readSse(
            path,
            (batch) => {
              for (const m of batch) {
                if (m.event === 'delta') timeline.delta(m.data as Delta);
                else if (m.event === 'error') {
                  const { code, message } = (m.data as { error: { code: string; message: string } }).error;
                  setError(`${code}: ${message}`);
                  if (code === 'UNAUTHENTICATED') stop.abort();
                } else timeline.apply(m.data as StoredEvent);
              }
              schedule();
            },
            stop.signal,
          );
          setError(null);
          if (timeline.closed) return;
        } catch (err) {
          if (stop.signal.aborted) return;
          setError(describe(err));
          // Retrying cannot help a refused key or an unknown conversation; a dropped connection it can.
          if ([401, 403, 404].includes((err as { status?: number }).status ?? 0)) return;
        }
        await new Promise((r) => setTimeout(r, RECONNECT_MS));
      }
    };
    void follow();
    return () => {
      stop.abort();
      cancelAnimationFrame(frame);
    };
  }, [id]);
  return { timeline, version, error };
}

/** One conversation: its live timeline, and the actions the key's roles allow. */
export function ConversationPage({ id, who }: { id: string; who: Who }) {
  const { timeline, version, error } = useTimeline(id);
  const [conversation, setConversation] = useState<Conversation | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [verified, setVerified] = useState<Verified | null>(null);
  const [message, setMessage] = useState('');
  const refreshing = useRef(0);
  const applied = useRef(0);

  // The header reads the read models at the position of the last event seen (read-your-writes),
  // at most every 150 ms while events stream in.
  const pending = useRef<number | null>(null);
  useEffect(() => {
    if (!timeline.lastPosition || pending.current !== null) return;
    pending.current = window.setTimeout(() => {
      pending.current = null;
      const mine = ++refreshing.current;
      api<Conversation>(`/api/v1/conversations/${id}`, { query: { minPosition: timeline.lastPosition } })
        .then((c) => {
          // An answer older than one already shown is dropped; a newer one is shown even while more are on the way.
          if (mine < applied.current) return;
          applied.current = mine;
          setConversation(c);
        })
        .catch(() => undefined);
    }, 150);
  }, [id, timeline.lastRevision]);
  useEffect(
    () => () => {
      if (pending.current !== null) clearTimeout(pending.current);
    },
    [],
  );

  const act = async (label: string, path: string, body: unknown = {}) => {
    setNotice(null);
    try {
      await api(`/api/v1/conversations/${id}${path}`, { method: 'POST', body });
      setNotice(`${label}: done.`);
    } catch (err) {
      setNotice(`${label}: ${describe(err)}`);
    }
  };
  const exportJsonl = async () => {
    const lines: string[] = [];
    for (let from = 0; ;) {
      const page = await api<StoredEvent[]>(`/api/v1/conversations/${id}/events`, {
        query: { fromRevision: from, limit: 1000 },
      });
      lines.push(...page.map((e) => JSON.stringify(e)));
      if (page.length < 1000) break;
      from = page[page.length - 1].revision + 1;
    }
    download(`conversation-${id}.jsonl`, 'application/x-ndjson', lines.length ? `${lines.join('\n')}\n` : '');
  };
  const verify = async () => {
    setVerified(null);
    try {
      setVerified(await api<Verified>(`/api/v1/conversations/${id}/verify`));
    } catch (err) {
      setNotice(`Verify: ${describe(err)}`);
    }
  };

  const status = conversation?.llmProcessStatus;
  const question = timeline.pendingQuestion();
  const approvals = timeline.pendingApprovals();
  const commands = can(who, 'client', 'admin');
  const admin = can(who, 'admin');
  const auditor = can(who, 'auditor', 'admin');

  return (
    <section aria-labelledby="conversation-title" class="conversation">
      <h1 id="conversation-title">
        Conversation <span class="mono">{id}</span>
        {status && (
          <span class={`status s-${status}`} data-testid="status">
            {STATUS_NAMES[status] ?? status}
          </span>
        )}
      </h1>
      {conversation && (
        <dl class="facts">
          <dt>Agent / action</dt>
          <dd>
            {conversation.llmAgent} / {conversation.llmAction}
          </dd>
          <dt>Subject</dt>
          <dd>{conversation.owner}</dd>
          <dt>Model</dt>
          <dd>
            {conversation.model.code} ({conversation.model.provider})
          </dd>
          <dt>Tokens in / out</dt>
          <dd>
            {num(conversation.biInputTokenCount)} / {num(conversation.biOutputTokenCount)}
          </dd>
          <dt>Cost</dt>
          <dd>{cost(conversation.biEstimatedCost)}</dd>
        </dl>
      )}

      <div class="actions" role="group" aria-label="Actions">
        {admin && (
          <>
            <button type="button" onClick={() => void act('Pause', '/pause')}>
              Pause
            </button>
            <button type="button" onClick={() => void act('Resume', '/resume')}>
              Resume
            </button>
            <button type="button" class="danger" onClick={() => void act('Kill', '/kill')}>
              Kill
            </button>
          </>
        )}
        <button type="button" onClick={() => void exportJsonl().catch((err: unknown) => setNotice(describe(err)))}>
          Export JSONL
        </button>
        {auditor && (
          <button type="button" onClick={() => void verify()}>
            Verify
          </button>
        )}
      </div>
      <div role="status" aria-live="polite" data-testid="notice">
        {notice}
        {verified &&
          (verified.ok ? (
            <p class="ok" data-testid="verify">
              The hash chain holds: {verified.checked} events checked.
            </p>
          ) : (
            <p class="error" data-testid="verify">
              The hash chain breaks at revision {verified.firstBadRevision}
              {verified.reason ? ` (${verified.reason})` : ''}.
            </p>
          ))}
      </div>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}

      {commands && question && (status === 'WA' || !status) && (
        <AnswerForm
          key={question.id}
          questions={question.questions}
          onSubmit={(answers) => act('Answers', '/answers', { answers, wait: false })}
        />
      )}
      {commands && approvals.length > 0 && (
        <section class="approvals" aria-labelledby="approvals-title">
          <h2 id="approvals-title">Waiting for approval</h2>
          {approvals.map((t) => (
            <div key={t.id} class="approval">
              <p>
                <strong>{t.name}</strong> <code>{t.args}</code>
              </p>
              <button
                type="button"
                class="approve"
                onClick={() => void act(`Approve ${t.name}`, `/tool-calls/${t.id.slice(1)}/approve`, { wait: false })}
              >
                Approve {t.name}
              </button>
              <button
                type="button"
                class="danger"
                onClick={() => void act(`Reject ${t.name}`, `/tool-calls/${t.id.slice(1)}/reject`, { wait: false })}
              >
                Reject {t.name}
              </button>
            </div>
          ))}
        </section>
      )}

      <h2 class="visually-hidden">Timeline</h2>
      <VirtualList<Item>
        items={timeline.items}
        version={version}
        keyOf={(i) => i.id}
        render={(i) => <TimelineItem item={i} />}
        label="Timeline"
      />

      {commands && (
        <form
          class="send"
          onSubmit={(e) => {
            e.preventDefault();
            const content = message.trim();
            if (!content) return;
            setMessage('');
            void act('Message', '/messages', { content, wait: false });
          }}
        >
          <label for="message">Message</label>
          <input id="message" value={message} onInput={(e) => setMessage(e.currentTarget.value)} />
          <button type="submit">Send</button>
        </form>
      )}
    </section>
  );
}
