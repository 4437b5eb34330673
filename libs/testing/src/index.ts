export { createTestDatabase, databaseUrl, TEST_ADMIN_URL, TEMPLATE_DATABASE, type TestDatabase } from './test-database';
