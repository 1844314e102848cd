// The `weft` command line (generate, chat, demo). Filled in by the CLI work.
console.error('weft: the command line is not built yet');
process.exitCode = 1;
