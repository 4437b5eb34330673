import { Module } from '@nestjs/common';
import { LlmModule } from '@parley/llm';
import { LongTermMemory } from './long-term-memory';
import { MemoryQueries } from './memory-queries';

/**
 * Long-term memory as the turn (LongTermMemory) and the query table's memory queries
 * (MemoryQueries) use it. Imported by TurnModule and by QueryTransportModule, so the query API
 * serves listMemories and getMemory too. Needs CONFIG, PG_POOL, and the global CatalogModule
 * (PROVIDER_ENDPOINTS, SnapshotResolver).
 */
@Module({
  imports: [LlmModule],
  providers: [LongTermMemory, MemoryQueries],
  exports: [LongTermMemory, MemoryQueries],
})
export class LongTermMemoryModule {}
