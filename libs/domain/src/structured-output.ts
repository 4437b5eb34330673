import type { ConversationCompleted, ConversationEvent, OutputProblem } from './conversation.events';
import type { OutputCheck } from './turn.commands';
import { turnFailed, type RunningTurn } from './turn.rules';

/** Repair rounds a turn gets for a reply that does not match the action's output schema. */
export const MAX_OUTPUT_REPAIRS = 1;

/** Problems listed in a repair prompt or a failure message at most (the event keeps them all, up to this too). */
const MAX_PROBLEMS = 20;

/**
 * Structured output (seed 000 llmSchemaOutput): what ends a turn whose action has an output
 * schema, from the worker's recorded check of the final reply (`answer`, `ended` the completion
 * it would otherwise record). Valid: the check, then the completion with the parsed output.
 * Invalid with a repair left: the check with a system message listing the problems (a
 * transcript entry after the answer), so the turn calls the model again. Invalid past the repairs: the check and the turn failed OUTPUT_INVALID.
 * A turn without a schema, or a reply the worker did not check, ends as before.
 */
export function checkedCompletion(
  c: RunningTurn,
  sequence: number,
  ended: ConversationCompleted,
  check: OutputCheck | undefined,
): ConversationEvent[] {
  if (!c.snapshot.outputSchema || !check) return [ended];
  const turnNo = c.turn.no;
  if (check.valid) {
    return [
      { type: 'OutputValidated', data: { turnNo, sequence, valid: true, output: check.output } },
      { ...ended, data: { ...ended.data, output: check.output } },
    ];
  }
  const errors = check.errors.slice(0, MAX_PROBLEMS);
  const invalid = { turnNo, sequence, valid: false, errors };
  if ((c.turn.outputRepairs ?? 0) >= MAX_OUTPUT_REPAIRS) {
    return [
      { type: 'OutputValidated', data: invalid },
      turnFailed(
        c,
        'OUTPUT_INVALID',
        `The reply does not match the output schema '${c.snapshot.outputSchema.code}' after ${MAX_OUTPUT_REPAIRS} repair: ${problemList(errors, '; ')}`,
      ),
    ];
  }
  const repair = { sequence: sequence + 1, prompt: repairPrompt(c.snapshot.outputSchema.code, errors) };
  return [{ type: 'OutputValidated', data: { ...invalid, repair } }];
}

/** What the model is told when its reply does not match: each problem with its path. */
export function repairPrompt(code: string, errors: readonly OutputProblem[]): string {
  return [
    `Your reply does not match the required output data structure ${code}. Problems:`,
    problemList(errors, '\n'),
    'Reply again with only the corrected JSON, nothing else.',
  ].join('\n');
}

const problemList = (errors: readonly OutputProblem[], sep: string): string =>
  errors.map((e) => `- ${e.path || '/'}: ${e.message}`).join(sep);
