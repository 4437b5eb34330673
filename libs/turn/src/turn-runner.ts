import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { SLOT_GRACE_MS, TurnSlots } from '@parley/auth';
import { SpendBudgets } from '@parley/catalog';
import { CONFIG, type Config } from '@parley/config';
import { assertNever } from '@parley/core';
import { ConversationRepository, ConversationSignals, type TurnJob, TurnScheduler } from '@parley/conversation';
import { nextTurnStep, turnDeadline, type ConversationEvent } from '@parley/domain';
import { EventTooLarge, InvalidEvent } from '@parley/event-store';
import { Collections } from '@parley/knowledge';
import { AdvisorRegistry, LlmClient, PROVIDER_ENDPOINTS, type ProviderEndpoints } from '@parley/llm';
import { MetricsService } from '@parley/observability';
import { LIVE_DELTAS, type LiveDeltas } from '@parley/read-models';
import { countTokens } from '@parley/prompt';
import { RemoteToolInvoker, ToolExecutor } from '@parley/tools';
import { LongTermMemory } from './long-term-memory/long-term-memory';
import { autoRecallStep, memoryToolStep } from './long-term-memory/memory-step';
import { modelStep } from './model-step';
import { retrievalStep } from './retrieval-step';
import { summaryStep } from './summary-step';
import { RunningTurnsWatch } from './running-turns-watch';
import { remoteToolEvents, runTool } from './tool-run';
import { TurnContext, TurnPreempted } from './turn-context';
import type { TurnDeps } from './turn-ports';

/**
 * A run stores its turn's stuck watchdog once it has run this long, or at once when it fails and
 * leaves the turn to a retry: most turns end sooner and never need one (two Redis commands and a
 * wake-up of the timers worker saved per turn). A process that dies before then leaves the job to
 * come back (a lease or a stalled job), and the run that takes it stores the watchdog.
 */
const WATCHDOG_AFTER_MS = 1_000;

/** A run stopped by its process's shutdown: its job is to run again, not to count as done. */
export class TurnHandedOn extends Error {
  constructor() {
    super('the process shut down while the turn ran; the turn goes on from its last recorded step');
    this.name = 'TurnHandedOn';
  }
}

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
    @Inject(RemoteToolInvoker) remote: RemoteToolInvoker,
    @Inject(RunningTurnsWatch) private readonly running: RunningTurnsWatch,
    @Optional() @Inject(LIVE_DELTAS) live?: LiveDeltas,
    @Optional() @Inject(MetricsService) metrics?: MetricsService,
    @Optional() @Inject(TurnSlots) private readonly slots?: TurnSlots,
    @Optional() @Inject(AdvisorRegistry) advisors?: AdvisorRegistry,
    @Optional() @Inject(LongTermMemory) memory?: LongTermMemory,
    @Optional() @Inject(Collections) collections?: Collections,
    @Optional() @Inject(SpendBudgets) budgets?: SpendBudgets,
  ) {
    this.deps = {
      config,
      repository,
      signals,
      scheduler,
      llm,
      endpoints,
      tools,
      remote,
      live,
      metrics,
      advisors,
      memory,
      collections,
      budgets,
    };
  }

  /**
   * `current`: the job was started at once by the process that appended its event (its first
   * attempt, run here), so no later run of the turn can have replaced it yet. `shutdown`: aborted
   * when the process stops before the turn ends (the job queue's grace); the run then stops where
   * it is and rejects, so that its job runs again and continues from the last recorded step.
   */
  async run(job: TurnJob, current = false, shutdown?: AbortSignal): Promise<void> {
    // When this process appended the event that queued the job (the all-in-one server), the
    // folded state is already here; the turn's appends carry its revision either way.
    const loaded = await this.deps.repository.loadForWrite(job.conversationId, BigInt(job.revision));
    const s = loaded.state;
    // Ended or stopped while no process ran it (a kill while its worker was down): its slot goes back.
    if (s.status !== 'RU' && s.status !== 'none') await this.slots?.release(s.owner, s.id).catch(() => undefined);
    if (s.status !== 'RU' || s.turn?.no !== job.turnNo) return;
    if (!current && s.turn.runs > 1 && (await this.restartedSince(job))) return;
    // The slot the turn's command took lives TURN_TIMEOUT_MS and a grace from the turn's start, so
    // it outlives the deadline of a turn with no longer a budget: only a configuration that gives
    // the turn longer extends it. Not awaited: the turn need not wait for Redis, and a slot not
    // extended only frees itself early.
    if (s.snapshot.limits.turnTimeoutMs > this.deps.config.turn.timeoutMs)
      void this.slots
        ?.holdFor(s.owner, s.id, turnDeadline({ ...s, turn: s.turn }) - Date.now() + SLOT_GRACE_MS)
        .catch(() => undefined);
    const ctx = new TurnContext(
      job.conversationId,
      this.deps.repository,
      loaded,
      `turn:${job.conversationId}:${job.turnNo}`,
    );
    const abort = new AbortController();
    const stopWatching = this.watch(ctx, abort, shutdown);
    let armed: Promise<void> | null = null;
    const armWatchdog = () =>
      (armed ??= this.deps.scheduler
        .watchdog(job.conversationId, job.turnNo, job.revision)
        .catch((err: unknown) =>
          this.logger.warn(`stuck watchdog of ${job.conversationId} not stored: ${(err as Error).message}`),
        ));
    const watchdog = setTimeout(() => void armWatchdog(), WATCHDOG_AFTER_MS);
    try {
      await this.loop(ctx, abort.signal).catch((err: unknown) => this.abandonIfFinal(ctx, err));
      if (shutdown?.aborted) throw new TurnHandedOn();
    } catch (err) {
      if (shutdown?.aborted) {
        this.logger.warn(`turn ${job.turnNo} of ${job.conversationId} stopped by the shutdown; its job is handed on`);
        throw err instanceof TurnHandedOn ? err : new TurnHandedOn();
      }
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
      // Stopped by a kill or pause: the turn's own state still says RU, the stream no longer does.
      const state =
        ctx.state.status === 'RU' && abort.signal.aborted && !shutdown?.aborted
          ? await this.deps.repository.load(job.conversationId).then(
              (loaded) => loaded.state,
              () => ctx.state,
            )
          : ctx.state;
      if (state.status !== 'RU' && state.status !== 'none')
        await this.slots?.release(state.owner, state.id).catch(() => undefined);
    }
  }

  /**
   * A turn whose events the store refuses for what they are (too large, not storable) would fail
   * the same way on every retry of its job, each with a new paid model call: it fails once, now.
   * Any other error is rethrown for the job to be retried.
   */
  private async abandonIfFinal(ctx: TurnContext, err: unknown): Promise<void> {
    if (!(err instanceof EventTooLarge) && !(err instanceof InvalidEvent)) throw err;
    this.logger.warn(`turn of ${ctx.conversationId} failed: its events cannot be stored: ${err.message}`);
    const message =
      err instanceof EventTooLarge
        ? `The turn produced an event of ${err.bytes} bytes, over the limit of ${err.maxBytes} (EVENT_MAX_BYTES).`
        : `The turn produced events that cannot be stored: ${err.message}`;
    await ctx.abandon({
      type: 'AbandonTurn',
      data: { code: err instanceof EventTooLarge ? 'LLM_LIMIT_EXCEEDED' : 'LLM_RUNTIME_ERROR', message },
    });
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

  /** Asks the decider for the turn's next step and performs it, until there is none. */
  private async loop(ctx: TurnContext, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const modelName = ctx.state.snapshot.model.name;
      const step = nextTurnStep(ctx.state, Date.now(), (text) => countTokens(text, modelName));
      switch (step.kind) {
        case 'idle':
          return;
        case 'record':
          await this.record(ctx, step.events);
          break;
        case 'run_tool':
          await runTool(ctx, this.deps, step, signal);
          break;
        case 'remote_tool': {
          const events = await remoteToolEvents(ctx, this.deps, step);
          if (!signal.aborted) await this.record(ctx, events);
          break;
        }
        case 'memory_tool':
          await memoryToolStep(ctx, this.deps, step, signal);
          break;
        case 'recall':
          await autoRecallStep(ctx, this.deps, step.plan, signal);
          break;
        case 'summarize':
          await summaryStep(ctx, this.deps, step.plan, signal);
          break;
        case 'retrieve':
          await retrievalStep(ctx, this.deps, step.plan, signal);
          break;
        case 'call_model':
          await modelStep(ctx, this.deps, step.plan, signal);
          break;
        default:
          assertNever(step, 'turn step');
      }
    }
  }

  /** Appends what the decider decided; a question gets its expiry timer, a remote call its deadline timer. */
  private async record(ctx: TurnContext, events: ConversationEvent[]): Promise<void> {
    const appended = await ctx.append(events);
    // An expiry timer Redis did not take now is stored by the TurnDispatcher.
    await this.deps.scheduler
      .afterAppend(ctx.conversationId, events, appended.revision)
      .catch((err: unknown) =>
        this.logger.warn(
          `timers of ${ctx.conversationId} not stored now (${(err as Error).message}); the turn dispatcher stores them`,
        ),
      );
  }

  /**
   * Stops the turn within a second of a kill or pause (in-process signal, or a stream written by
   * someone else), and at once on `shutdown`.
   */
  private watch(ctx: TurnContext, abort: AbortController, shutdown?: AbortSignal): () => void {
    const stop = () => abort.abort();
    shutdown?.addEventListener('abort', stop, { once: true });
    if (shutdown?.aborted) abort.abort();
    const off = this.deps.signals.onAbort(ctx.conversationId, stop);
    const stopWatching = this.running.watch(ctx.conversationId, (revision) => {
      if (revision === null || revision === ctx.revision) return;
      this.deps.repository
        .load(ctx.conversationId)
        .then(({ state }) => state.status !== 'RU' && abort.abort())
        .catch(() => undefined);
    });
    return () => {
      shutdown?.removeEventListener('abort', stop);
      off();
      stopWatching();
    };
  }
}
