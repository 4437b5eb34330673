import { useState } from 'preact/hooks';
import type { Question } from '../timeline';

/** The form of a pending question: a choice list where the question has options, required fields marked. */
export function AnswerForm({
  questions,
  onSubmit,
}: {
  questions: Question[];
  onSubmit: (answers: Record<string, string>) => Promise<void>;
}) {
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [sending, setSending] = useState(false);
  return (
    <form
      class="answers"
      aria-labelledby="answers-title"
      onSubmit={(e) => {
        e.preventDefault();
        setSending(true);
        const filled = Object.fromEntries(Object.entries(answers).filter(([, v]) => v.trim() !== ''));
        void onSubmit(filled).finally(() => setSending(false));
      }}
    >
      <h2 id="answers-title">The assistant asks</h2>
      {questions.map((q) => {
        const id = `answer-${q.key}`;
        const set = (value: string) => setAnswers({ ...answers, [q.key]: value });
        // A question is required unless it says otherwise (as the AskUserQuestion tool defines it).
        const required = q.required !== false;
        return (
          <div class="field" key={q.key}>
            <label for={id}>
              {q.question}
              {required && (
                <span class="required" aria-hidden="true">
                  {' '}
                  (required)
                </span>
              )}
            </label>
            {q.options?.length ? (
              <select
                id={id}
                name={q.key}
                required={required}
                value={answers[q.key] ?? ''}
                onChange={(e) => set(e.currentTarget.value)}
              >
                <option value="">Choose…</option>
                {q.options.map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                name={q.key}
                required={required}
                value={answers[q.key] ?? ''}
                onInput={(e) => set(e.currentTarget.value)}
              />
            )}
          </div>
        );
      })}
      <button type="submit" disabled={sending}>
        Send answers
      </button>
    </form>
  );
}
