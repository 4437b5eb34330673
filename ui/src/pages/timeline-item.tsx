import { cost, ms, num } from '../format';
import type { Item } from '../timeline';

/** One row of the timeline. */
export function TimelineItem({ item }: { item: Item }) {
  switch (item.kind) {
    case 'message':
      return (
        <article class={`msg ${item.role === 'US' ? 'user' : 'assistant'}`} data-kind="message">
          <h3>{item.role === 'US' ? 'User' : 'Assistant'}</h3>
          {item.reasoning && (
            <details>
              <summary>Reasoning</summary>
              <p class="pre">{item.reasoning}</p>
            </details>
          )}
          {item.content && <p class="pre">{item.content}</p>}
          {item.calls.length > 0 && <p class="muted">Calls {item.calls.join(', ')}</p>}
        </article>
      );
    case 'live':
      return (
        <article class="msg assistant live" data-kind="live" aria-busy="true">
          <h3>Assistant (streaming)</h3>
          {item.reasoning && (
            <details>
              <summary>Reasoning</summary>
              <p class="pre">{item.reasoning}</p>
            </details>
          )}
          <p class="pre" data-testid="live-text">
            {item.text}
          </p>
        </article>
      );
    case 'model':
      return (
        <div class="model" data-kind="model">
          <span class="tag">
            model call {item.turnNo}.{item.callNo}
          </span>
          {item.attempts.map((a) => (
            <span key={a.attempt} class={`attempt ${a.outcome}`}>
              attempt {a.attempt}: {a.outcome}
              {a.model && ` · ${a.model}`}
              {a.outcome === 'ok' &&
                ` · ${num(a.inputTokens)} in / ${num(a.outputTokens)} out · ${cost(a.cost)} · ${ms(a.latencyMs)} · ${a.finishReason}`}
              {a.failure && ` · ${a.failure}`}
              {a.retryAfterMs !== undefined && ` · retry in ${ms(a.retryAfterMs)}`}
            </span>
          ))}
        </div>
      );
    case 'tool':
      return (
        <div class={`tool ${item.outcome.replace(' ', '-')}`} data-kind="tool">
          <span class="tag">tool</span> <strong>{item.name}</strong> <span class="outcome">{item.outcome}</span>
          {item.durationMs !== undefined && <span> · {ms(item.durationMs)}</span>}
          {item.code && <span> · {item.code}</span>}
          {item.approval && item.approval !== item.outcome && <span> · {item.approval}</span>}
          <details>
            <summary>Arguments and result</summary>
            <pre>{item.args}</pre>
            {item.result !== undefined && <pre>{item.result}</pre>}
          </details>
        </div>
      );
    case 'question':
      return (
        <div class="question" data-kind="question">
          <span class="tag">question</span>
          <ul>
            {item.questions.map((q) => (
              <li key={q.key}>
                {q.question}
                {item.answers?.[q.key] !== undefined && (
                  <>
                    {' '}
                    → <strong>{item.answers[q.key]}</strong>
                  </>
                )}
              </li>
            ))}
          </ul>
        </div>
      );
    case 'failure':
      return (
        <div class="failure" data-kind="failure">
          <span class="tag">failed</span> <strong>{item.code}</strong> {item.message}
        </div>
      );
    case 'marker':
      return (
        <div class="marker" data-kind="marker">
          {item.text}
        </div>
      );
  }
}
