/** @type {import('jest').Config} */
const swc = [
  '@swc/jest',
  {
    jsc: {
      target: 'es2022',
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
    },
    module: { type: 'commonjs' },
  },
];

const libs = [
  'core',
  'domain',
  'config',
  'event-store',
  'conversation',
  'catalog',
  'prompt',
  'llm',
  'tools',
  'mcp',
  'turn',
  'read-models',
  'transport',
  'observability',
  'platform',
  'testing',
  'auth',
  'knowledge',
  'client',
];

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': swc },
  moduleNameMapper: Object.fromEntries(libs.map((l) => [`^@parley/${l}$`, `<rootDir>/libs/${l}/src`])),
  testMatch: [
    '<rootDir>/libs/**/*.spec.ts',
    '<rootDir>/apps/**/*.spec.ts',
    '<rootDir>/ui/src/**/*.spec.ts',
    '<rootDir>/test/**/*.e2e-spec.ts',
  ],
  globalSetup: '<rootDir>/test/global-setup.ts',
  testTimeout: 30_000,
  maxWorkers: 2,
};
