import { Module } from '@nestjs/common';
import { ConversationModule, SNAPSHOT_SOURCE } from '@parley/conversation';
import { LlmModule } from '@parley/llm';
import { ToolsModule } from '@parley/tools';
import { RunningTurnsWatch } from './running-turns-watch';
import { RuntimeSnapshotSource } from './runtime-snapshot-source';
import { TimerRunner } from './timer-runner';
import { TurnDispatcher } from './turn-dispatcher';
import { TurnRunner } from './turn-runner';
import { TurnWorker } from './turn-worker';

/**
 * The runtime of conversations: the snapshot source for new conversations, and the runners of
 * turn and timer jobs. `forRoot({ worker: false })` for an app that only sends commands.
 */
@Module({})
export class TurnModule {
  static forRoot(options: { worker: boolean } = { worker: true }) {
    return {
      module: TurnModule,
      global: true,
      imports: [ConversationModule, LlmModule, ToolsModule],
      providers: [
        RuntimeSnapshotSource,
        { provide: SNAPSHOT_SOURCE, useExisting: RuntimeSnapshotSource },
        RunningTurnsWatch,
        TurnRunner,
        TimerRunner,
        ...(options.worker ? [TurnWorker, TurnDispatcher] : []),
      ],
      exports: [SNAPSHOT_SOURCE, TurnRunner, ConversationModule, ToolsModule],
    };
  }
}
