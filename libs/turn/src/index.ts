export { TurnRunner } from './turn-runner';
export { runtimeModules } from './runtime-modules';
