"""Build tiny random-weight embedding fixtures with sentence-transformers reference vectors.

Makes, under --out (default test/fixtures):

  qwen3-embed-tiny   a decoder embedder laid out as Qwen3-Embedding publishes it: a bare Qwen3Model
                     (config architectures [Qwen3Model], tensors without the "model." prefix, no
                     lm_head) with sentence-transformers modules: Transformer -> Pooling (last token)
                     -> Normalize, named prompts in config_sentence_transformers.json, and a tokenizer
                     whose post-processor appends <|endoftext|> (as Qwen3-Embedding's does). The
                     tokenizer is models/weft-demo's.
  bert-embed-tiny    an encoder embedder as all-MiniLM / bge / e5 publish theirs: a bare BertModel
                     with mean pooling and Normalize and a WordPiece tokenizer.json made here
                     (bert_fixture.py), with the Python tokenizers package's ids for a set of texts.
  nomic-embed-tiny   a NomicBertModel (rotary, SwiGLU, fused Wqkv, no biases) with mean pooling and
                     Normalize, as nomic-embed publishes it, and the same tokenizer (nomic_fixture.py).
  xlmr-embed-tiny    an XLMRobertaModel (positions offset by padding_idx + 1, one token type) with mean
                     pooling and Normalize and a Unigram tokenizer made here (xlmr_fixture.py), as
                     multilingual-e5 / bge-m3 publish theirs.

reference.json holds, for each text, sentence-transformers' encode() output as the folder is saved
(last token, normalised), with the "query" prompt, and the unnormalised mean and last-token pooling
of the same hidden states (what a folder asking for those gives), all float32.

Run where PyTorch, transformers and sentence-transformers exist (a recipe, never CI):

    nice python3 tools/embeddings/make_fixtures.py --out test/fixtures [--only xlmr-embed-tiny]
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

import sentence_transformers
import torch
import transformers
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3Model

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEMO_TOKENIZER = os.path.join(REPO, "models", "weft-demo", "tokenizer.json")
COMMAND = "nice python3 tools/embeddings/make_fixtures.py --out test/fixtures"
QUERY_PROMPT = "Instruct: Given a question, find passages that answer it\nQuery: "

TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "hello",
    "Paged KV caches hold attention keys and values in fixed-size blocks.",
    "A much longer text, so that a prompt spans several cache blocks and prefill steps: " * 6,
    "weft runs continuous batching in TypeScript.",
    "émigré naïve café, 東京 and 🙂 emoji",
]


def tokenizer_with_eos(path):
    """The demo tokenizer, with a post-processor that appends <|endoftext|> to every text."""
    tok = json.load(open(DEMO_TOKENIZER))
    eos = next(t for t in tok["added_tokens"] if t["content"] == "<|endoftext|>")
    tok["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                 {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}}],
        "special_tokens": {"<|endoftext|>": {"id": "<|endoftext|>", "ids": [eos["id"]], "tokens": ["<|endoftext|>"]}},
    }
    with open(path, "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    vocab = max(max(tok["model"]["vocab"].values()), max(t["id"] for t in tok["added_tokens"])) + 1
    return vocab, eos["id"]


README = """# qwen3-embed-tiny: a random-weight decoder embedder

A test fixture for weft's embeddings (issue #32), laid out as Qwen3-Embedding publishes its
models: a bare `Qwen3Model` (`config.json` architectures `[Qwen3Model]`, tensors without the
`model.` prefix, no LM head) saved by sentence-transformers with a Transformer -> Pooling (last
token) -> Normalize pipeline (`modules.json`, `1_Pooling/config.json`, `2_Normalize/`), named
prompts `query` and `document` in `config_sentence_transformers.json`, and weft-demo's tokenizer
with a post-processor that appends `<|endoftext|>`.

Hidden 64, 3 layers, 4 query / 2 KV heads of 16, MLP 128, vocabulary 1,491, random float32
weights (seed {seed}). Made by

    {command}

with sentence-transformers {st}, transformers {tf}, torch {torch}, on the CPU in float32.
`reference.json` holds, per text, sentence-transformers' `encode()` (as saved, and with the
`query` prompt) and the same hidden states pooled by mean and by last token without
normalisation; its `conventions` say exactly how each was computed.
"""


def randomize(model, gen):
    """Weights large enough that the hidden states spread; norms away from 1 so a skipped one shows."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif "embed_tokens" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * (1.2 / p.shape[-1] ** 0.5))


def build_qwen3(out_dir, seed):
    path = os.path.join(out_dir, "qwen3-embed-tiny")
    shutil.rmtree(path, ignore_errors=True)
    gen = torch.Generator().manual_seed(seed)
    with tempfile.TemporaryDirectory() as tmp:
        vocab, eos_id = tokenizer_with_eos(os.path.join(tmp, "tokenizer.json"))
        fast = PreTrainedTokenizerFast(tokenizer_file=os.path.join(tmp, "tokenizer.json"), eos_token="<|endoftext|>",
                                       pad_token="<|endoftext|>", padding_side="left")
        fast.save_pretrained(tmp)
        config = Qwen3Config(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                             num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                             rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 1e6},
                             tie_word_embeddings=True, eos_token_id=eos_id, pad_token_id=eos_id)
        model = Qwen3Model(config).to(torch.float32)
        randomize(model, gen)
        model.save_pretrained(tmp, safe_serialization=True)
        transformer = Transformer(tmp, max_seq_length=512)
        st = SentenceTransformer(modules=[transformer, Pooling(64, pooling_mode="lasttoken"), Normalize()],
                                 prompts={"query": QUERY_PROMPT, "document": ""}, default_prompt_name=None)
        st.save(path)
    st = SentenceTransformer(path, device="cpu")
    st.eval()
    with torch.no_grad():
        plain = st.encode(TEXTS, convert_to_numpy=True, batch_size=len(TEXTS))
        query = st.encode(TEXTS, prompt_name="query", convert_to_numpy=True, batch_size=len(TEXTS))
        # The same hidden states pooled the other ways, unnormalised (one text at a time: no padding).
        hf = st[0].model
        tok = st.tokenizer
        mean, last, ids = [], [], []
        for text in TEXTS:
            enc = tok(text, return_tensors="pt")
            hidden = hf(**enc).last_hidden_state[0].float()
            ids.append(enc["input_ids"][0].tolist())
            mean.append(hidden.mean(dim=0).tolist())
            last.append(hidden[-1].tolist())
    ref = {
        "model": "qwen3-embed-tiny (random weights)",
        "seed": seed,
        "texts": TEXTS,
        "query_prompt": QUERY_PROMPT,
        "token_ids": ids,
        "embeddings": plain.tolist(),
        "query_embeddings": query.tolist(),
        "mean_unnormalized": mean,
        "last_unnormalized": last,
        "conventions": {
            "embeddings": "SentenceTransformer(folder).encode(texts): last-token pooling, L2-normalised, float32",
            "query_embeddings": "the same with prompt_name='query' (the prompt is prepended to the text)",
            "mean_unnormalized": "mean of every token's last hidden state (after the final norm), no normalisation",
            "last_unnormalized": "the last token's last hidden state, no normalisation",
            "token_ids": "tokenizer(text) with special tokens: <|endoftext|> appended by the post-processor",
        },
        "produced_with": {
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "python": sys.version.split()[0],
            "device": "cpu, float32",
            "command": COMMAND,
        },
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"))
    # sentence-transformers writes a model card of its own; the fixture's README says what it is instead.
    with open(os.path.join(path, "README.md"), "w") as f:
        f.write(README.format(st=sentence_transformers.__version__, tf=transformers.__version__, torch=torch.__version__,
                              command=COMMAND, seed=seed))
    print("qwen3-embed-tiny:", sorted(os.listdir(path)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "test", "fixtures"))
    ap.add_argument("--only", help="build this fixture alone (its folder name)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    import tokenizers
    from bert_fixture import build_bert
    from nomic_fixture import build_nomic
    from xlmr_fixture import build_xlmr
    versions = {"sentence_transformers": sentence_transformers.__version__, "transformers": transformers.__version__,
                "tokenizers": tokenizers.__version__, "torch": torch.__version__, "python": sys.version.split()[0],
                "device": "cpu, float32"}
    builds = {
        "qwen3-embed-tiny": lambda: build_qwen3(args.out, 3201),
        "bert-embed-tiny": lambda: build_bert(args.out, 3202, versions, COMMAND),
        "nomic-embed-tiny": lambda: build_nomic(args.out, 3203, versions, COMMAND),
        "xlmr-embed-tiny": lambda: build_xlmr(args.out, 3204, versions, COMMAND),
    }
    if args.only is not None and args.only not in builds:
        ap.error(f"--only: one of {', '.join(builds)}")
    for name, build in builds.items():
        if args.only in (None, name):
            build()


if __name__ == "__main__":
    main()
