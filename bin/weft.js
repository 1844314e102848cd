#!/usr/bin/env node
// Runs the built CLI (dist/cli.js): a clone builds it in `npm install` (scripts/install.cjs), a package ships it (prepack).
import('../dist/cli.js').catch((error) => {
  console.error('weft: could not start the CLI (in a clone, run `npm install` or `npm run build` first):', error.message);
  process.exitCode = 1;
});
