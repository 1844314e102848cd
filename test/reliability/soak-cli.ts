// `npm run soak -- --requests 10000 [--seed N] [--minutes M] [--hybrid]`: the seed's workload, one JSON line out.
import { parseArgs } from 'node:util';
import { runSoak } from './soak.js';

const { values } = parseArgs({
  options: { requests: { type: 'string', default: '2000' }, seed: { type: 'string', default: '1' }, minutes: { type: 'string' }, hybrid: { type: 'boolean', default: false } },
});
const requests = Number(values.requests);
const seed = Number(values.seed);
if (!Number.isSafeInteger(requests) || requests < 1) throw new Error(`--requests: expected a positive integer, got ${values.requests}`);
const summary = await runSoak({
  requests,
  seed,
  hybrid: values.hybrid,
  ...(values.minutes !== undefined && { timeLimitMs: Number(values.minutes) * 60_000 }),
});
console.log(JSON.stringify(summary));
const failed = summary.crashes + summary.leakedBlocks + summary.mismatches + summary.unsettled;
process.exitCode = failed > 0 ? 1 : 0;
