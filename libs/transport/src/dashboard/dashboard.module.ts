import { Module } from '@nestjs/common';
import { LlmModule } from '@parley/llm';
import { DashboardController } from './dashboard.controller';
import { StatusController } from './status.controller';
import { UiFiles } from './ui-files';

/**
 * The dashboard at /ui and the status it reads (docs/dashboard.md). LlmModule is imported for
 * the process's one BreakerRegistry (a module is a singleton: the turn worker's own).
 */
@Module({
  imports: [LlmModule],
  providers: [{ provide: UiFiles, useFactory: () => new UiFiles() }],
  controllers: [DashboardController, StatusController],
})
export class DashboardModule {}
