# Reference RoPE inverse frequencies from transformers (float32, CPU) for test/fixtures/rope-inv-freq.json.
# Run where torch and transformers are installed: python3 rope_inv_freq.py (writes rope_ref.json to $OUT or .).
import json, torch, transformers
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
out = []
for dim in [8, 32, 48, 64, 128]:
    for theta in [10000.0, 500000.0, 1000000.0]:
        for scaling in [None, {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}]:
            kw = dict(hidden_size=dim*4, num_attention_heads=4, head_dim=dim, rope_theta=theta, max_position_embeddings=131072)
            if scaling: kw["rope_scaling"] = scaling
            cfg = LlamaConfig(**kw)
            rt = "default" if scaling is None else "llama3"
            fn = ROPE_INIT_FUNCTIONS[rt] if rt != "default" else None
            if fn is None:
                from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
                emb = LlamaRotaryEmbedding(cfg)
                inv = emb.inv_freq
            else:
                inv, _ = fn(cfg, "cpu")
            out.append({"dim": dim, "theta": theta, "scaling": scaling, "inv_freq": [float(x) for x in inv.float().tolist()]})
print(transformers.__version__, torch.__version__)
json.dump(out, open("/tmp/o.json","w"))
import os, shutil
shutil.copy("/tmp/o.json", os.environ.get("OUT", ".") + "/rope_ref.json")
