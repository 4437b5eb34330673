import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { TurnSlots } from '@parley/auth';
import { CONFIG, type Config } from '@parley/config';
import {
  ConversationRepository,
  ConversationSignals,
  type ConversationEvent,
  type TurnJob,
  TurnScheduler,
} from '@parley/conversation';
import { LlmClient, PROVIDER_ENDPOINTS, type ProviderEndpoints } from '@parley/llm';
import { MetricsService } from '@parley/observability';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import { ToolExecutor } from '@parley/tools';
import { modelStep } from './model-step';
import { toolStep, unresolvedCalls } from './tool-step';
import { RunningTurnsWatch } from './running-turns-watch';
import { TurnContext, TurnPreempted } from './turn-context';
import { overTime, type TurnDeps, type TurnEnd } from './turn-ports';

/**
 * A run stores its turn's stuck watchdog once it has run this long, or at once when it fails and
 * leaves the turn to a retry: most turns end sooner and never need one (two Redis commands and a
 * wake-up of the timers worker saved per turn). A process that dies before then leaves the job to
 * come back (a lease or a stalled job), and the run that takes it stores the watchdog.
 */
const WATCHDOG_AFTER_MS = 1_000;

/**
 * Runs one turn job: folds the stream and works from the last recorded step (so a job that
 * runs again after a crash continues where the dead worker stopped), calling the model and
 * tools until the model stops, a limit is hit, or a human must answer.
 */
@Injectable()
export class TurnRunner {
  private readonly logger = new Logger('TurnRunner');
  private readonly deps: TurnDeps;

  constructor(
    @Inject(CONFIG) config: Config,
    @Inject(ConversationRepository) repository: ConversationRepository,
    @Inject(ConversationSignals) signals: ConversationSignals,
    @Inject(TurnScheduler) scheduler: TurnScheduler,
    @Inject(LlmClient) llm: LlmClient,
    @Inject(PROVIDER_ENDPOINTS) endpoints: ProviderEndpoints,
    @Inject(ToolExecutor) tools: ToolExecutor,
    @Inject(RunningTurnsWatch) private readonly running: RunningTurnsWatch,
    @Optional() @Inject(LIVE_DELTAS) live?: LiveDeltas,
    @Optional() @Inject(MetricsService) metrics?: MetricsService,
    @Optional() @Inject(TurnSlots) private readonly slots?: TurnSlots,
  ) {
    this.deps = {
      config,
      repository,
      signals,
      scheduler,
      llm,
      endpoints,
      tools,
      live,
      metrics,
    };
  }

  /**
   * `current`: the job was started at once by the process that appended its event (its first
   * attempt, run here), so no later run of the turn can have replaced it yet.
   */
  async run(job: TurnJob, current = false): Promise<void> {
    // When this process appended the event that queued the job (the all-in-one server), the
    // folded state is already here; the turn's appends carry its revision either way.
    const loaded = await this.deps.repository.loadForWrite(job.conversationId, BigInt(job.revision));
    const s = loaded.state;
    if (s.status !== 'RU' || s.turn?.no !== job.turnNo) return;
    if (!current && s.turn.runs > 1 && (await this.restartedSince(job))) return;
    const ctx = new TurnContext(
      job.conversationId,
      this.deps.repository,
      loaded,
      `turn:${job.conversationId}:${job.turnNo}`,
    );
    const abort = new AbortController();
    const stopWatching = this.watch(ctx, abort);
    let armed: Promise<void> | null = null;
    const armWatchdog = () =>
      (armed ??= this.deps.scheduler
        .watchdog(job.conversationId, job.turnNo, job.revision)
        .catch((err: unknown) =>
          this.logger.warn(`stuck watchdog of ${job.conversationId} not stored: ${(err as Error).message}`),
        ));
    const watchdog = setTimeout(() => void armWatchdog(), WATCHDOG_AFTER_MS);
    try {
      const end = await this.loop(ctx, abort.signal);
      if (end) await this.finish(ctx, end);
    } catch (err) {
      if (!(err instanceof TurnPreempted) && !abort.signal.aborted) {
        this.logger.error(
          `turn ${job.turnNo} of ${job.conversationId} failed and will be retried: ${(err as Error).message}`,
        );
        await armWatchdog();
        throw err;
      }
      this.logger.log(`turn ${job.turnNo} of ${job.conversationId} stopped: the conversation changed under it`);
    } finally {
      clearTimeout(watchdog);
      stopWatching();
      const state = ctx.state;
      if (state.status !== 'RU') await this.slots?.release(state.owner, state.id).catch(() => undefined);
    }
  }

  /**
   * Whether the turn was resumed after the event that queued `job`: then that resume's own job
   * runs it, and this one, of an earlier run (its worker died, and a pause and resume or a
   * recover followed before its lease ran out), would only call the model a second time beside
   * it. Asked only of turns resumed at least once, for jobs not known to be current.
   */
  private async restartedSince(job: TurnJob): Promise<boolean> {
    const later = await this.deps.repository.eventsFrom(job.conversationId, BigInt(job.revision) + 1n);
    return later.some((e) => e.type === 'TurnResumed' || e.type === 'TurnStarted');
  }

  private async loop(ctx: TurnContext, signal: AbortSignal): Promise<TurnEnd | null> {
    const deadline = Date.parse(ctx.state.turn!.startedAt) + ctx.state.snapshot.limits.turnTimeoutMs;
    for (;;) {
      const c = ctx.state;
      if (c.status !== 'RU' || signal.aborted) return null;
      const turn = c.turn!;
      if (Date.now() > deadline) return overTime(c.snapshot.limits.turnTimeoutMs);
      if (turn.consecutiveToolFailures >= 2) return failed('TOOL_ERRORS', 'Two tool calls in a row failed.');
      if (unresolvedCalls(c).length > 0) {
        if ((await toolStep(ctx, this.deps, signal)) === 'wait') return null;
        continue;
      }
      if (turn.endedByTool) return { kind: 'completed' };
      const last = c.transcript.at(-1);
      if (last?.role === 'AS' && last.turnNo === turn.no && !last.toolCalls?.length) return { kind: 'completed' };
      if (turn.modelCalls > c.snapshot.limits.maxToolRounds) {
        return failed(
          'LLM_LIMIT_EXCEEDED',
          `The model asked for tools more than ${c.snapshot.limits.maxToolRounds} rounds in a row.`,
        );
      }
      const end = await modelStep(ctx, this.deps, signal, deadline);
      if (end) return end.kind === 'completed' ? null : end;
    }
  }

  private async finish(ctx: TurnContext, end: TurnEnd): Promise<void> {
    const c = ctx.state;
    if (c.status !== 'RU') return;
    const turn = c.turn!;
    let event: ConversationEvent;
    if (end.kind === 'failed') {
      event = { type: 'ConversationFailed', data: { turnNo: turn.no, code: end.code, message: end.message } };
    } else if (end.kind === 'completed') {
      const reply = turn.endedByTool ? turn.endedByTool.reply : turn.lastReply;
      event = {
        type: 'ConversationCompleted',
        data: {
          turnNo: turn.no,
          finishReason: turn.lastFinishReason ?? 'ST',
          reply,
          responseModel: turn.responseModel,
        },
      };
    } else return;
    await ctx.append([event]);
  }

  /** Stops the turn within a second of a kill or pause: in-process signal, or a stream written by someone else. */
  private watch(ctx: TurnContext, abort: AbortController): () => void {
    const off = this.deps.signals.onAbort(ctx.conversationId, () => abort.abort());
    const stopWatching = this.running.watch(ctx.conversationId, (revision) => {
      if (revision === null || revision === ctx.revision) return;
      this.deps.repository
        .load(ctx.conversationId)
        .then(({ state }) => state.status !== 'RU' && abort.abort())
        .catch(() => undefined);
    });
    return () => {
      off();
      stopWatching();
    };
  }
}

const failed = (code: Extract<TurnEnd, { kind: 'failed' }>['code'], message: string): TurnEnd => ({
  kind: 'failed',
  code,
  message,
});
