"""openvino.genai's ContinuousBatchingPipeline (the core OpenVINO Model Server runs) on one workload.

Called by bench/openvino/openvino.bench.ts with one JSON object on stdin:
  {"model": dir, "prompts": [[ids...], ...], "max_tokens": n, "num_kv_blocks": n | null,
   "max_num_seqs": n, "max_num_batched_tokens": n, "properties": {...}}
Adds every prompt at once, steps until all finish, and prints one JSON line:
  {"tokens": total generated, "seconds": wall time, "ttft": [seconds per request],
   "outputs": [[ids...], ...], "statuses": [...], "max_cache_usage": percent of the cache at peak}
Greedy, ignore_eos, prefix caching off, as weft's side of the benchmark.
"""
import json
import sys
import time

import numpy as np
import openvino as ov
import openvino_genai as genai


def main():
    job = json.load(sys.stdin)
    config = genai.SchedulerConfig()
    config.cache_size = 0 if job.get('num_kv_blocks') else 1
    if job.get('num_kv_blocks'):
        config.num_kv_blocks = job['num_kv_blocks']
    config.max_num_seqs = job['max_num_seqs']
    config.max_num_batched_tokens = job['max_num_batched_tokens']
    config.enable_prefix_caching = False
    pipe = genai.ContinuousBatchingPipeline(job['model'], config, 'CPU', job.get('properties', {}))
    gen = genai.GenerationConfig()
    gen.max_new_tokens = job['max_tokens']
    gen.ignore_eos = True
    gen.do_sample = False
    start = time.perf_counter()
    handles = [pipe.add_request(i, ov.Tensor(np.array([p], dtype=np.int64)), gen) for i, p in enumerate(job['prompts'])]
    ttft = [None] * len(handles)
    outputs = [[] for _ in handles]
    while pipe.has_non_finished_requests():
        pipe.step()
        now = time.perf_counter() - start
        for i, h in enumerate(handles):
            if h.can_read():
                for out in h.read().values():
                    outputs[i].extend(out.generated_ids)
                if ttft[i] is None and outputs[i]:
                    ttft[i] = now
    seconds = time.perf_counter() - start
    statuses = [str(h.get_status()) for h in handles]
    metrics = pipe.get_metrics()
    print(json.dumps({'tokens': sum(len(o) for o in outputs), 'seconds': seconds, 'ttft': ttft, 'outputs': outputs,
                      'statuses': statuses, 'version': genai.__version__,
                      'max_cache_usage': metrics.max_cache_usage}))


if __name__ == '__main__':
    main()
