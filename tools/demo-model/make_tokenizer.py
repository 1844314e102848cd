"""Trains weft-demo's byte-level BPE tokenizer in plain Python and writes tokenizer.json and
tokenizer_config.json (with chat_template.jinja inside) for Hugging Face tokenizers.

    python3 tools/demo-model/make_tokenizer.py --out models/weft-demo

Pre-tokenization: special tokens are split off first, then an ASCII regex splits words (with one
leading space), single digits (so numbers are spelled digit by digit and the model can copy any
number), punctuation runs and whitespace; then GPT-2's byte-to-character map. Merges are learnt on
rendered conversations from datagen (seed 1000, its own stream) until MAX_VOCAB entries or
until no pair occurs MIN_COUNT times.
"""
import argparse
import collections
import json
import os
import re

import chat_format
import datagen
from tool_impl import TOOLS

SPLIT_PATTERN = r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+"
# (content, special): special tokens are dropped by decode(skip_special_tokens=True); the
# reasoning and tool-call markers are not, as in Qwen3, so parsers can see them in decoded text.
ADDED_TOKENS = [
    ("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
    ("<think>", False), ("</think>", False), ("<tool_call>", False), ("</tool_call>", False),
]
MAX_VOCAB = 3072
MIN_COUNT = 8
CORPUS_SEED = 1000
CORPUS_SIZE = 4000


def bytes_to_unicode():
    """GPT-2's reversible map from bytes to printable characters (what ByteLevel uses)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


BYTE_CHAR = bytes_to_unicode()
SPECIAL_RE = re.compile("|".join(re.escape(t) for t, _ in ADDED_TOKENS))
SPLIT_RE = re.compile(SPLIT_PATTERN)


def pre_tokenize(text):
    words = []
    for segment in SPECIAL_RE.split(text):
        for piece in SPLIT_RE.findall(segment):
            words.append("".join(BYTE_CHAR[b] for b in piece.encode("utf-8")))
    return words


def train(texts):
    counts = collections.Counter()
    for text in texts:
        counts.update(pre_tokenize(text))
    words = [[list(w), c] for w, c in counts.items()]
    vocab = [BYTE_CHAR[b] for b in range(256)]
    merges = []
    while len(vocab) + len(ADDED_TOKENS) < MAX_VOCAB:
        pairs = collections.Counter()
        for symbols, c in words:
            for i in range(len(symbols) - 1):
                pairs[(symbols[i], symbols[i + 1])] += c
        if not pairs:
            break
        best_count = max(pairs.values())
        if best_count < MIN_COUNT:
            break
        best = min(p for p, c in pairs.items() if c == best_count)  # deterministic tie-break
        merged = best[0] + best[1]
        merges.append(best)
        vocab.append(merged)
        for entry in words:
            s = entry[0]
            if len(s) < 2:
                continue
            out, i = [], 0
            while i < len(s):
                if i + 1 < len(s) and s[i] == best[0] and s[i + 1] == best[1]:
                    out.append(merged)
                    i += 2
                else:
                    out.append(s[i])
                    i += 1
            entry[0] = out
    return vocab, merges


def tokenizer_json(vocab, merges):
    ids = {tok: i for i, tok in enumerate(vocab)}
    added = [{"id": len(vocab) + i, "content": t, "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": special}
             for i, (t, special) in enumerate(ADDED_TOKENS)]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": SPLIT_PATTERN}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": False, "vocab": ids, "merges": [[a, b] for a, b in merges]},
    }


def tokenizer_config(first_added_id, template):
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "add_bos_token": False,
        "add_eos_token": False,
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "model_max_length": 4096,
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": {
            str(first_added_id + i): {"content": t, "lstrip": False, "normalized": False, "rstrip": False,
                                      "single_word": False, "special": special}
            for i, (t, special) in enumerate(ADDED_TOKENS)},
        "chat_template": template,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    texts = [chat_format.render(m, TOOLS)[0] for m in datagen.generate(CORPUS_SEED, CORPUS_SIZE)]
    vocab, merges = train(texts)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tokenizer.json"), "w") as f:
        json.dump(tokenizer_json(vocab, merges), f, ensure_ascii=False, indent=None)
    template = open(os.path.join(here, "chat_template.jinja")).read()
    with open(os.path.join(args.out, "tokenizer_config.json"), "w") as f:
        json.dump(tokenizer_config(len(vocab), template), f, ensure_ascii=False, indent=2)
    print(f"{len(vocab)} BPE entries ({len(merges)} merges) + {len(ADDED_TOKENS)} added tokens")


if __name__ == "__main__":
    main()
