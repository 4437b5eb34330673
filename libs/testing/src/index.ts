export {
  createTestDatabase,
  createScratchDatabase,
  createEmptyDatabase,
  databaseUrl,
  TEST_ADMIN_URL,
  TEMPLATE_DATABASE,
  type TestDatabase,
} from './test-database';
export { deciderSpec, type Decider } from './decider-spec';
export { freePort, killProcess, startNatsServer, startRedisServer, waitForHttp } from './child-process';
export { until } from './until';
export { startTcpProxy, type TcpProxy } from './tcp-proxy';
export { snapshotFixture, toolFixture } from './fixtures/snapshot.fixture';
export { startSimulator, type Simulator, type SimulatorOptions } from './simulator/simulator';
export { demoScript } from './simulator/demo-script';
export { currentToolResults, lastUserMessage } from './simulator/rules';
export * from './simulator/simulator.types';
