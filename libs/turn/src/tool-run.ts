import type { TurnStep } from '@parley/domain';
import { withSpan } from '@parley/observability';
import type { TurnContext } from './turn-context';
import type { TurnDeps } from './turn-ports';

/**
 * Runs one tool call the turn asked for and records its outcome as the decider says
 * (StartToolCall, RecordToolOutcome). A call that may not run twice is on record before it runs,
 * so a crash leaves it INTERRUPTED; an idempotent one is simply run again after a crash, so its
 * start and outcome are staged and stored with the turn's next append (the next model call's,
 * usually).
 */
export async function runTool(
  ctx: TurnContext,
  deps: TurnDeps,
  step: Extract<TurnStep, { kind: 'run_tool' }>,
  signal: AbortSignal,
): Promise<void> {
  const { call, tool, repositoryId, deadline } = step;
  const keep = async (events: ReturnType<TurnContext['decide']>) => {
    if (tool.idempotent) ctx.stage(events);
    else await ctx.append(events);
  };
  await keep(ctx.decide({ type: 'StartToolCall', data: { toolCallId: call.id } }));
  const c = ctx.state;
  const outcome = await withSpan('parley.tool_call', { 'parley.tool': tool.name, 'parley.tool_kind': tool.kind }, () =>
    deps.tools.execute(tool, call.arguments, {
      conversationId: c.id,
      appId: c.snapshot.applicationCode,
      ...(repositoryId ? { repositoryId } : {}),
      toolCallId: call.id,
      signal,
      // Never past the turn's deadline: a slow tool near it gets only the time left.
      timeoutMs: Math.max(1, Math.min(deps.config.turn.toolCallTimeoutMs, deadline - Date.now())),
      maxOutputBytes: c.snapshot.limits.maxToolOutputBytes,
    }),
  );
  if (signal.aborted) return;
  await keep(ctx.decide({ type: 'RecordToolOutcome', data: { toolCallId: call.id, outcome } }));
}

/**
 * Publishes a remote tool's call and says what to record: that the turn now waits for it
 * (RemoteToolInvoked, the conversation in WA with no worker), or the failure that kept it from
 * being sent, as for any tool.
 */
export async function remoteToolEvents(
  ctx: TurnContext,
  deps: TurnDeps,
  step: Extract<TurnStep, { kind: 'remote_tool' }>,
): Promise<ReturnType<TurnContext['decide']>> {
  const { call, tool, deadline } = step;
  const sent = await deps.remote.invoke(tool, call.arguments, {
    conversationId: ctx.conversationId,
    toolCallId: call.id,
    turnDeadline: deadline,
  });
  if (!sent.ok) return ctx.decide({ type: 'RecordToolOutcome', data: { toolCallId: call.id, outcome: sent.outcome } });
  const { correlationId, subject } = sent;
  return ctx.decide({
    type: 'RecordRemoteToolInvoked',
    data: { toolCallId: call.id, correlationId, subject, deadline: sent.deadline },
  });
}
