"""Encoder throughput, the PyTorch side: a random-weight all-MiniLM-L6-shaped BertModel (hidden 384,
6 layers, 12 heads, MLP 1536, vocabulary 30522) made once into a folder, and sentence-transformers'
forward (BertModel + mean pooling + Normalize, float32, CPU) timed on the same token ids weft reads in
tools/embeddings/encoder_bench.ts. A recipe for a figure, never CI:

    nice python3 tools/embeddings/encoder_bench.py make /tmp/minilm-random
    nice python3 tools/embeddings/encoder_bench.py time /tmp/minilm-random --batch 32 --tokens 16 --threads 2

`time` prints one JSON line: texts/s over --repeats timed runs (median), after one warm-up.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def make(folder):
    from bert_fixture import build_tokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    import tempfile
    torch.manual_seed(1)
    core, _ = build_tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        BertTokenizerFast(tokenizer_object=core, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                          mask_token="[MASK]").save_pretrained(tmp)
        config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                            intermediate_size=1536, max_position_embeddings=512)
        BertModel(config, add_pooling_layer=False).save_pretrained(tmp, safe_serialization=True)
        st = SentenceTransformer(modules=[Transformer(tmp, max_seq_length=512), Pooling(384, pooling_mode="mean"), Normalize()])
        st.save(folder)


def ids(batch, tokens, seed=7):
    g = torch.Generator().manual_seed(seed)
    body = torch.randint(1000, 30000, (batch, tokens - 2), generator=g)
    return torch.cat([torch.full((batch, 1), 2), body, torch.full((batch, 1), 3)], dim=1)


def time_it(folder, batch, tokens, threads, repeats):
    from sentence_transformers import SentenceTransformer
    torch.set_num_threads(threads)
    st = SentenceTransformer(folder, device="cpu").eval()
    features = {"input_ids": ids(batch, tokens), "attention_mask": torch.ones(batch, tokens, dtype=torch.long),
                "token_type_ids": torch.zeros(batch, tokens, dtype=torch.long)}
    runs = []
    with torch.inference_mode():
        st(dict(features))
        for _ in range(repeats):
            start = time.perf_counter()
            out = st(dict(features))["sentence_embedding"]
            runs.append(time.perf_counter() - start)
    print(json.dumps({"runner": "sentence-transformers", "torch": torch.__version__, "batch": batch, "tokens": tokens,
                      "threads": threads, "texts_per_s": batch / statistics.median(runs), "dims": out.shape[1]}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["make", "time"])
    ap.add_argument("folder")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    if args.what == "make":
        make(args.folder)
    else:
        time_it(args.folder, args.batch, args.tokens, args.threads, args.repeats)


if __name__ == "__main__":
    main()
