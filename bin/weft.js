#!/usr/bin/env node
// Runs the built CLI (dist/cli.js). `npm install` builds it via the prepare script.
import('../dist/cli.js').catch((error) => {
  console.error('weft: could not start the CLI (run `npm install` or `npm run build` first):', error.message);
  process.exitCode = 1;
});
