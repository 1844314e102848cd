/**
 * Which part of a step a function's instructions belong to, by its demangled
 * name (callgrind's `fn=`) and object (`ob=`). bench/profile-step/run.ts sums
 * a profile's self costs by these parts; test/bench/profile-step-parts.test.ts
 * checks the rules against names taken from real callgrind runs.
 *
 * Names are matched without their argument lists (withoutArguments), so a
 * parameter type (`QuantizedInput`) cannot name the part. Rules are patterns
 * rather than a list of functions, so a kernel added later under the same
 * naming (`rows_*`, `quant_groups_*`, `kquant_rows_*`, `group_tile<...>`, `attend_*`)
 * is counted without changes; `--top` in run.ts shows what each part holds.
 */

export type Part =
  | 'matmul'
  | 'attention'
  | 'kv'
  | 'quantize'
  | 'norms'
  | 'sync'
  | 'setup'
  | 'allocation'
  | 'copies'
  | 'js';

export interface PartInfo {
  readonly part: Part;
  readonly label: string;
  /** Runs once per layer: scaled to the real layer count. */
  readonly perLayer: boolean;
}

/** The parts in table order (the LM head, measured as a whole, is a row of its own in run.ts). */
export const PARTS: readonly PartInfo[] = [
  { part: 'matmul', label: 'weight matmuls in the layers', perLayer: true },
  { part: 'attention', label: 'attention', perLayer: true },
  { part: 'kv', label: 'KV cache writes', perLayer: true },
  { part: 'quantize', label: 'quantizing activations', perLayer: true },
  { part: 'norms', label: 'norms, RoPE, SiLU, residual adds', perLayer: true },
  { part: 'sync', label: 'thread synchronisation', perLayer: true },
  { part: 'setup', label: 'step setup (embedding, RoPE angles, step checks, binding)', perLayer: false },
  { part: 'allocation', label: 'allocation (malloc/free, buffer growth)', perLayer: false },
  { part: 'copies', label: 'copies (memcpy/memset not attributed to a caller)', perLayer: false },
  { part: 'js', label: 'JS (node, V8, JIT code: batch building, greedy sampling)', perLayer: false },
];

/** A demangled name without its trailing argument list (and `const`, and a `[clone ...]` suffix), nested parentheses included. */
export function withoutArguments(signature: string): string {
  const end = signature.replace(/\s+\[clone [^\]]*\]$/, '').replace(/\s+const$/, '').replace(/'\d+$/, '');
  if (!end.endsWith(')')) return end;
  let depth = 0;
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] === ')') depth++;
    else if (end[i] === '(' && --depth === 0) return end.slice(0, i);
  }
  return end;
}

/**
 * Helpers of libc/libm/libgcc (memset, memcpy, expf, sincosf, locks, popcount) whose cost
 * is moved to their callers' parts (run.ts, by the call graph): a kernel's
 * zeroing of its accumulators counts with the kernel, attention's scalar exp
 * with attention, and a mutex node's libuv takes with the JS, not with weft's
 * thread pool. What has no caller in the profile keeps the helper's own part
 * (classify).
 */
export function chargedToCaller(fn: string, ob: string): boolean {
  return /lib(c|m|gcc_s)[.-]/.test(ob) && /^(__)?(mem(cpy|move|set)|expf?|sinf?|cosf?|sincosf?)(_[a-z0-9_]+)?$|^__(ieee754|exp|sin|cos|popcount)|^(__)?pthread_(mutex|cond|spin|rwlock)\w*(@.*)?$/.test(withoutArguments(fn));
}

// The text inside `ThreadPool::parallel_for<...>` / `parallel_for_guided<...>`:
// the lambda that instantiation runs, named after its enclosing function.
// Small jobs run inline and GCC inlines the lambda's body into the
// instantiation, so it is classified by the lambda's owner, not as thread
// synchronisation (the pool's own work is ThreadPool::run/run_chunks/worker_loop).
function lambdaOf(fn: string): string | undefined {
  const at = fn.search(/ThreadPool::parallel_for(_guided)?</);
  return at < 0 ? undefined : fn.slice(fn.indexOf('<', at) + 1);
}

const MATMUL = /\b(k?quant_)?(rows|groups)_\w+|\bk?_?group_(rows|tile|rest)\b|\bk_group_(tile|rest)\b|\bq[46]k_(group_tile|block_lanes)\b|\bk_groups(_any)?\b|\brows<|\btile<|\bfinish_tile\b|\b(run_parts|run_group_parts|run_rows|project_parts|kquant_project|kquant_matmul\w*|quant_project\w*|quant_matmul\w*|matmul|matmul_with|project|project_with|run_with)\b|\bMatmul|\bamx_/;
const ATTENTION = /\battend_\w+|\battention_kernel|\baccumulate_values|\bsoftmax_step|\bexp_(reduced|nonpositive|clamped)|\bvdots16|\bdots(4|8|16)|\bload_rows|KvCache::view\b/;
const KV = /KvCache::(write_row|copy_block)/;
const QUANTIZE = /\bquantiz/; // not dequantize_row (the embedding's)
const NORMS = /\brmsnorm\b|\brope\b|\badd_and_norm\b|\bmlp_block\b|\bsilu_mul\w*|\blm_head\b/;
const SYNC = /ThreadPool::|spin_until|worker_loop|pthread_cond|pthread_mutex|futex|lll_lock|lll_unlock|sched_yield|condition_variable|this_thread|clock_gettime|steady_clock|std::thread|__atomic/;
const ALLOCATION = /\bmalloc|\bfree\b|_int_free|_int_malloc|cfree|calloc|realloc|memalign|operator new|operator delete|tcache|malloc_consolidate|unlink_chunk|_M_default_append|_M_realloc_insert|\bgrow</;
const COPIES = /mem(cpy|move|set)/;

/** The part of one function (fn: demangled, with or without arguments; ob: the object it lies in). */
export function classify(fn: string, ob: string): Part {
  const name = withoutArguments(fn);
  const lambda = lambdaOf(name);
  if (lambda !== undefined) {
    // attention_block runs two per-token loops: #1 q/k norm, RoPE and the KV
    // writes (write_row is a function of its own), #2 the attention tiles.
    const loop = /\battention_block\([^{]*\)::\{lambda[^}]*#(\d+)\}/.exec(lambda)?.[1];
    if (loop === '1') return 'norms';
    if (loop === '2') return 'attention';
    // The owner's name alone: its argument types (MatmulScratch, ThreadPool) must not name the part.
    const owner = classify(lambda.replace(/\(anonymous namespace\)/g, '').split('(')[0]!, ob);
    return owner === 'js' || owner === 'setup' ? 'sync' : owner;
  }
  const native = /weft_native/.test(ob);
  if (native && QUANTIZE.test(name)) return 'quantize';
  if (native && MATMUL.test(name)) return 'matmul';
  if (native && ATTENTION.test(name)) return 'attention';
  if (KV.test(name)) return 'kv';
  if (native && NORMS.test(name)) return 'norms';
  if (SYNC.test(name)) return 'sync';
  if (ALLOCATION.test(name)) return 'allocation';
  if (native) return 'setup';
  if (COPIES.test(name)) return 'copies';
  if (/lib(c|m)[.-]/.test(ob) && /^(__)?(expf?|sinf?|cosf?|sincosf?)(_|$)|^__(ieee754|exp|sin|cos)/.test(name)) return 'norms';
  return 'js';
}

/** WeightType's enumerators in order, from `enum class WeightType { F32, F16, ... }` (native/src/cpu/kernels/matmul_types.h). */
export function weightTypeNames(header: string): string[] {
  const body = /enum class WeightType\s*\{([^}]*)\}/.exec(header)?.[1];
  return body ? body.split(',').map((x) => x.trim()).filter(Boolean) : [];
}

/**
 * A kernel's name for the table: without `void weft::(anonymous namespace)::`
 * and its arguments, `(weft::WeightType)3` spelled `Q8_0` when the names are given.
 */
export function kernelLabel(fn: string, weightTypes: readonly string[] = []): string {
  return withoutArguments(fn)
    .replace(/^(void |bool )/, '')
    .replace(/\bweft::(\(anonymous namespace\)::)?/g, '')
    .replace(/\(WeightType\)(\d+)/g, (all, n: string) => weightTypes[Number(n)] ?? all);
}
