export { TurnRunner } from './turn-runner';
export { runtimeModules } from './runtime-modules';
export { buildMessages, RECALLED_LABEL, SUMMARY_LABEL } from './build-messages';
export { LongTermMemory } from './long-term-memory/long-term-memory';
export { LongTermMemoryModule } from './long-term-memory/long-term-memory.module';
export { MemoryQueries } from './long-term-memory/memory-queries';
