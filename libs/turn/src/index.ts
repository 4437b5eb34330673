export { TurnModule } from './turn.module';
export { TurnRunner } from './turn-runner';
export { TimerRunner } from './timer-runner';
export { TurnWorker } from './turn-worker';
export { TurnDispatcher, DISPATCH_AFTER_MS } from './turn-dispatcher';
export { RuntimeSnapshotSource } from './runtime-snapshot-source';
export { buildMessages } from './build-messages';
export { runtimeModules } from './runtime-modules';
