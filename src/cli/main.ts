// The `weft` command line, bundled to dist/cli.js and started by bin/weft.js.
// (No top-level await: tsup also emits this entry as CommonJS.)
import { processIo } from './io.js';
import { runCli } from './run-cli.js';

void runCli(process.argv.slice(2), processIo()).then((exitCode) => {
  process.exitCode = exitCode;
});
