export { createTestDatabase, databaseUrl, TEST_ADMIN_URL, TEMPLATE_DATABASE, type TestDatabase } from './test-database';
export { deciderSpec, type Decider } from './decider-spec';
export { snapshotFixture, toolFixture } from './fixtures/snapshot.fixture';
