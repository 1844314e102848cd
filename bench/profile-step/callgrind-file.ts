/**
 * Reads a callgrind output file (the format valgrind's callgrind writes,
 * https://valgrind.org/docs/manual/cl-format.html) into per-function self
 * costs and caller -> callee inclusive costs, for the first event (Ir).
 * Handles name compression ("(id) name"), and position lines of one
 * position (the default, --dump-instr=no) with relative "+n"/"-n"/"*" forms.
 */
import { readFileSync } from 'node:fs';

export interface CallgrindProfile {
  /** Instructions executed in each function itself, keyed "object\tfunction". */
  readonly self: Map<string, number>;
  /** Inclusive instructions of calls, keyed "caller\tcallee" (each "object\tfunction"). */
  readonly calls: Map<string, number>;
  /** The call counts of those edges. */
  readonly callCounts: Map<string, number>;
  readonly total: number;
}

export function readCallgrind(path: string): CallgrindProfile {
  const names: Record<string, Map<string, string>> = { ob: new Map(), fn: new Map(), fl: new Map() };
  const expand = (kind: 'ob' | 'fn' | 'fl', text: string): string => {
    const m = /^\((\d+)\)(?:\s+(.*))?$/.exec(text.trim());
    if (!m) return text.trim();
    if (m[2] !== undefined) names[kind]!.set(m[1]!, m[2]);
    return names[kind]!.get(m[1]!) ?? `(${m[1]})`;
  };
  const self = new Map<string, number>();
  const calls = new Map<string, number>();
  const callCounts = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let ob = '', fn = '', cob = '', cfn = '';
  let pendingCall: number | undefined; // the calls= count; the next cost line is that call's inclusive cost
  let total = 0;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (line === '') continue;
    const c = line.charCodeAt(0);
    const isCost = (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 42; // digit + - *
    if (isCost) {
      const parts = line.trim().split(/\s+/);
      const ir = Number(parts[1] ?? 0);
      const caller = `${ob}\t${fn}`;
      if (pendingCall !== undefined) {
        const key = `${caller}\t${cob || ob}\t${cfn}`;
        add(calls, key, ir);
        add(callCounts, key, pendingCall);
        pendingCall = undefined;
        cob = ''; // a cob= applies to the next call only
      } else {
        add(self, caller, ir);
        total += ir;
      }
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0) continue;
    const key = line.slice(0, eq), value = line.slice(eq + 1);
    switch (key) {
      case 'ob': ob = expand('ob', value); cob = ''; break;
      case 'fn': fn = expand('fn', value); cob = ''; break;
      case 'cob': cob = expand('ob', value); break;
      case 'cfn': case 'cfi': case 'cfl':
        if (key === 'cfn') cfn = expand('fn', value);
        else expand('fl', value);
        break;
      case 'fl': case 'fi': case 'fe': expand('fl', value); break;
      case 'calls': pendingCall = Number(value.trim().split(/\s+/)[0]); break;
      default: break;
    }
  }
  return { self, calls, callCounts, total };
}

/** a + b per key (several dumps of one kind of step). */
export function add(a: CallgrindProfile, b: CallgrindProfile): CallgrindProfile {
  const sum = (x: Map<string, number>, y: Map<string, number>) => {
    const out = new Map(x);
    for (const [k, v] of y) out.set(k, (out.get(k) ?? 0) + v);
    return out;
  };
  return { self: sum(a.self, b.self), calls: sum(a.calls, b.calls), callCounts: sum(a.callCounts, b.callCounts), total: a.total + b.total };
}
