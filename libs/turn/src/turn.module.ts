import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { ConversationModule, SNAPSHOT_SOURCE } from '@parley/conversation';
import { AdvisorRegistry, LlmModule } from '@parley/llm';
import { LoggingAdvisor } from './advisors/logging.advisor';
import { PiiRedactionAdvisor } from './advisors/pii-redaction.advisor';
import { ResponseCacheAdvisor } from './advisors/response-cache.advisor';
import { SafeGuardAdvisor } from './advisors/safe-guard.advisor';
import { ToolsModule } from '@parley/tools';
import { LongTermMemoryModule } from './long-term-memory/long-term-memory.module';
import { RemoteCompletions } from './remote-completions';
import { RunningTurnsWatch } from './running-turns-watch';
import { RuntimeSnapshotSource } from './runtime-snapshot-source';
import { TimerRunner } from './timer-runner';
import { TurnDispatcher } from './turn-dispatcher';
import { TurnRunner } from './turn-runner';
import { TurnWorker } from './turn-worker';

/**
 * The runtime of conversations: the snapshot source for new conversations, and the runners of
 * turn and timer jobs, the advisors (@ParleyAdvisor providers of any module, and the built-in
 * ones), long-term memory (whose operations are in the command and query tables). `forRoot({ worker: false })` for an app that only sends commands.
 */
@Module({})
export class TurnModule {
  static forRoot(options: { worker: boolean } = { worker: true }) {
    return {
      module: TurnModule,
      global: true,
      imports: [DiscoveryModule, ConversationModule, LlmModule, ToolsModule, LongTermMemoryModule],
      providers: [
        AdvisorRegistry,
        LoggingAdvisor,
        SafeGuardAdvisor,
        PiiRedactionAdvisor,
        ResponseCacheAdvisor,
        RuntimeSnapshotSource,
        { provide: SNAPSHOT_SOURCE, useExisting: RuntimeSnapshotSource },
        RunningTurnsWatch,
        TurnRunner,
        TimerRunner,
        ...(options.worker ? [TurnWorker, TurnDispatcher, RemoteCompletions] : []),
      ],
      exports: [SNAPSHOT_SOURCE, TurnRunner, AdvisorRegistry, ConversationModule, ToolsModule, LongTermMemoryModule],
    };
  }
}
