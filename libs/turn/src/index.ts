export { TurnRunner } from './turn-runner';
export { runtimeModules } from './runtime-modules';
export { buildMessages, SUMMARY_LABEL } from './build-messages';
