// Runs the TypeScript sources directly (with decorator metadata and the @parley/* paths of
// tsconfig.json), so `npm start`, the CLI and the benchmarks need no build step.
process.env.SWC_NODE_PROJECT =
  process.env.SWC_NODE_PROJECT || require('node:path').join(__dirname, '..', 'tsconfig.json');
require('@swc-node/register');
