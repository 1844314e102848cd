/**
 * Lets `perf record` sample only a benchmark's measured rounds (not loading and
 * quantizing the model, which would swamp a profile): run the benchmark under
 *
 *   mkfifo /tmp/ctl; WEFT_PERF_CTL=/tmp/ctl perf record -D -1 --control fifo:/tmp/ctl -g -- npx tsx bench/X.bench.ts ...
 *
 * and it writes `enable` before its rounds and `disable` after them. Without
 * WEFT_PERF_CTL both calls do nothing.
 */
import { writeFileSync } from 'node:fs';

function tell(command: string): void {
  const fifo = process.env.WEFT_PERF_CTL;
  if (fifo) writeFileSync(fifo, `${command}\n`);
}

export const perfEnable = (): void => tell('enable');
export const perfDisable = (): void => tell('disable');
