"""Build tiny random-weight reranker fixtures with reference scores computed in Python.

Makes, under --out (default test/fixtures):

  qwen3-rerank-tiny    a Qwen3ForCausalLM folder laid out as Qwen3-Reranker publishes it (tied
                       embeddings, an LM head scored on its "yes" and "no" tokens). The tokenizer is
                       models/weft-demo's with "yes" and "no" added as whole (non-special) tokens, as
                       a real Qwen vocabulary has them. reference.json holds the scores of query /
                       document pairs computed the way Qwen3-Reranker's model card does: the fixed
                       system prefix, "<Instruct>: ...\\n<Query>: ...\\n<Document>: ..." and the
                       assistant suffix with an empty think block, each tokenized on its own and
                       concatenated; score = softmax over the last position's [no, yes] logits, [yes].

  bert-cross-encoder-tiny
                       a BertForSequenceClassification folder with one label (a bge-reranker-shaped
                       cross-encoder) and a WordPiece tokenizer, saved by sentence-transformers'
                       CrossEncoder. reference.json holds, per pair: the pair's token ids and token
                       types as the tokenizer's pair template makes them, each side's ids without
                       special tokens, the encoder's final hidden state at [CLS], the classifier's raw
                       logit and CrossEncoder.predict()'s score (its default activation for one label:
                       sigmoid). weft's head is tested against these without a BERT forward; the full
                       path runs once the encoder backend lands.

  xlmr-cross-encoder-tiny
                       the same for an XLMRobertaForSequenceClassification (bge-reranker-base / -v2-m3's
                       shape): positions from padding_idx + 1, one token type, the pair template
                       <s> q </s> </s> d </s>, RoBERTa's head (classifier.dense, tanh, classifier.out_proj),
                       and xlmr_fixture.py's Unigram tokenizer built from the pairs' words.

Run where PyTorch, transformers and sentence-transformers exist (a recipe, never CI):

    nice python3 tools/embeddings/make_rerank_fixtures.py --out test/fixtures [--only xlmr-cross-encoder-tiny]
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
from sentence_transformers import CrossEncoder
from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast, PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEMO_TOKENIZER = os.path.join(REPO, "models", "weft-demo", "tokenizer.json")
COMMAND = "nice python3 tools/embeddings/make_rerank_fixtures.py --out test/fixtures"

# Qwen3-Reranker's prompt, as its model card builds it.
SYSTEM = 'Judge whether the Document meets the requirements based on the Query and the Instruct provided. Note that the answer can only be "yes" or "no".'
PREFIX = "<|im_start|>system\n" + SYSTEM + "<|im_end|>\n<|im_start|>user\n"
SUFFIX = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
DEFAULT_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"
CUSTOM_INSTRUCTION = "Find the passage that names a cache"

QUERY = "What holds the keys and values of attention?"
DOCUMENTS = [
    "Paged KV caches hold attention keys and values in fixed-size blocks.",
    "The quick brown fox jumps over the lazy dog.",
    "hello",
    "A much longer document, so that a pair spans several cache blocks and prefill steps: " * 4,
    "yes or no? émigré naïve café, 東京 and 🙂",
]


def randomize(model, gen):
    """Weights large enough that states spread and the two logits differ; norms away from 1."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or name.endswith("LayerNorm.weight"):
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("LayerNorm.bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "embed" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * (1.2 / p.shape[-1] ** 0.5))


def versions():
    return {
        "sentence_transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "device": "cpu, float32",
        "command": COMMAND,
    }


def qwen3_tokenizer_with_yes_no(path):
    """The demo tokenizer with "yes" and "no" as whole added tokens (not special: decoded like text)."""
    tok = json.load(open(DEMO_TOKENIZER))
    next_id = max(max(tok["model"]["vocab"].values()), max(t["id"] for t in tok["added_tokens"])) + 1
    for word in ("yes", "no"):
        tok["added_tokens"].append({"id": next_id, "content": word, "single_word": False, "lstrip": False, "rstrip": False,
                                    "normalized": False, "special": False})
        next_id += 1
    with open(path, "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    return next_id


def build_qwen3_reranker(out_dir, seed):
    path = os.path.join(out_dir, "qwen3-rerank-tiny")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    gen = torch.Generator().manual_seed(seed)
    vocab = qwen3_tokenizer_with_yes_no(os.path.join(path, "tokenizer.json"))
    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(path, "tokenizer.json"), eos_token="<|im_end|>",
                                  pad_token="<|endoftext|>", padding_side="left")
    tok.save_pretrained(path)
    eos = tok.convert_tokens_to_ids("<|im_end|>")
    config = Qwen3Config(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=512,
                         rms_norm_eps=1e-6, rope_parameters={"rope_type": "default", "rope_theta": 1e6},
                         tie_word_embeddings=True, eos_token_id=eos, pad_token_id=tok.pad_token_id)
    config.architectures = ["Qwen3ForCausalLM"]
    model = Qwen3ForCausalLM(config).to(torch.float32)
    randomize(model, gen)
    # Small "yes" / "no" rows keep the two logits within a few units of each other, so the scores
    # spread over (0, 1) instead of saturating at 0 or 1 (where any error would vanish).
    with torch.no_grad():
        for word in ("yes", "no"):
            row = model.model.embed_tokens.weight[tok.convert_tokens_to_ids(word)]
            row.copy_(0.08 * torch.randn(row.shape, generator=gen))
    model.tie_weights()
    model.save_pretrained(path, safe_serialization=True)
    model.eval()

    yes = tok.convert_tokens_to_ids("yes")
    no = tok.convert_tokens_to_ids("no")
    prefix_ids = tok.encode(PREFIX, add_special_tokens=False)
    suffix_ids = tok.encode(SUFFIX, add_special_tokens=False)

    def pair_ids(instruction, doc):
        body = f"<Instruct>: {instruction}\n<Query>: {QUERY}\n<Document>: {doc}"
        return prefix_ids + tok.encode(body, add_special_tokens=False) + suffix_ids

    def scores(batch):
        # Left padding, as the model card's tokenizer does, so the last position is every pair's last token.
        longest = max(len(ids) for ids in batch)
        input_ids = torch.tensor([[tok.pad_token_id] * (longest - len(ids)) + ids for ids in batch])
        mask = torch.tensor([[0] * (longest - len(ids)) + [1] * len(ids) for ids in batch])
        with torch.no_grad():
            logits = model(input_ids=input_ids, attention_mask=mask).logits[:, -1, :]
        pair = torch.stack([logits[:, no], logits[:, yes]], dim=1)
        return torch.nn.functional.log_softmax(pair, dim=1)[:, 1].exp().tolist(), pair.tolist()

    cases = {}
    for name, instruction in (("default_instruction", DEFAULT_INSTRUCTION), ("custom_instruction", CUSTOM_INSTRUCTION)):
        ids = [pair_ids(instruction, doc) for doc in DOCUMENTS]
        batched, _ = scores(ids)
        alone = [scores([one]) for one in ids]
        cases[name] = {
            "instruction": instruction,
            "token_ids": ids,
            "scores": [s[0][0] for s in alone],
            "scores_batched": batched,
            "logits_no_yes": [s[1][0] for s in alone],
        }
    ref = {
        "model": "qwen3-rerank-tiny (random weights)",
        "seed": seed,
        "query": QUERY,
        "documents": DOCUMENTS,
        "yes_token_id": yes,
        "no_token_id": no,
        **cases,
        "conventions": {
            "token_ids": "tokenize(prefix) + tokenize('<Instruct>: {instruction}\\n<Query>: {query}\\n<Document>: {doc}') + tokenize(suffix), no special tokens added",
            "scores": "one pair at a time: exp(log_softmax([logit(no), logit(yes)]))[yes] at the last position, float32",
            "scores_batched": "the same pairs in one left-padded batch, as the model card runs them",
        },
        "produced_with": versions(),
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"), ensure_ascii=False)
    with open(os.path.join(path, "README.md"), "w") as f:
        f.write(f"""# qwen3-rerank-tiny: a random-weight Qwen3-Reranker-shaped model

A test fixture for weft's reranking (issue #32): a `Qwen3ForCausalLM` with tied embeddings, as
Qwen3-Reranker-0.6B is published, and weft-demo's tokenizer with `yes` and `no` added as whole
tokens. Hidden 64, 3 layers, 4 query / 2 KV heads of 16, MLP 128, vocabulary {vocab}, random
float32 weights (seed {seed}). `reference.json` holds scores computed the way the model card does
(its `conventions` say how). Made with transformers {transformers.__version__}, torch {torch.__version__} by

    {COMMAND}
""")
    print("qwen3-rerank-tiny:", sorted(os.listdir(path)))


WORDS = sorted(set(" ".join([QUERY, *DOCUMENTS]).lower().replace("?", " ? ").replace(".", " . ").replace(",", " , ")
                   .replace(":", " : ").replace("-", " - ").split()))


def build_cross_encoder(out_dir, seed):
    path = os.path.join(out_dir, "bert-cross-encoder-tiny")
    shutil.rmtree(path, ignore_errors=True)
    gen = torch.Generator().manual_seed(seed)
    with tempfile.TemporaryDirectory() as tmp:
        # A small WordPiece vocabulary: the specials, single characters (with ## forms) and the words of the pairs.
        chars = sorted(set("".join(WORDS)))
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + ["##" + c for c in chars] + [w for w in WORDS if len(w) > 1]
        with open(os.path.join(tmp, "vocab.txt"), "w") as f:
            f.write("\n".join(dict.fromkeys(vocab)) + "\n")
        tok = BertTokenizerFast(os.path.join(tmp, "vocab.txt"), do_lower_case=True)
        config = BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=64, max_position_embeddings=128, type_vocab_size=2, num_labels=1)
        config.architectures = ["BertForSequenceClassification"]
        model = BertForSequenceClassification(config).to(torch.float32)
        randomize(model, gen)
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        ce = CrossEncoder(tmp, device="cpu", max_length=128)
        ce.save(path)
    ce = CrossEncoder(path, device="cpu")
    ce.eval()
    hf = ce.model
    tok = ce.tokenizer
    pairs = [[QUERY, doc] for doc in DOCUMENTS]
    with torch.no_grad():
        predicted = ce.predict(pairs, convert_to_numpy=True, batch_size=len(pairs)).tolist()
        rows = []
        for query, doc in pairs:
            enc = tok(query, doc, return_tensors="pt")
            out = hf(**enc, output_hidden_states=True)
            rows.append({
                "input_ids": enc["input_ids"][0].tolist(),
                "token_type_ids": enc["token_type_ids"][0].tolist(),
                "query_ids": tok.encode(query, add_special_tokens=False),
                "document_ids": tok.encode(doc, add_special_tokens=False),
                "cls_hidden": out.hidden_states[-1][0, 0].tolist(),
                "logit": out.logits[0, 0].item(),
            })
        # A pair cut to 24 tokens the way the tokenizer's longest_first truncation cuts it.
        cut = tok(QUERY, DOCUMENTS[3], truncation="longest_first", max_length=24)
    ref = {
        "model": "bert-cross-encoder-tiny (random weights)",
        "seed": seed,
        "query": QUERY,
        "documents": DOCUMENTS,
        "pairs": rows,
        "scores": predicted,
        "activation": type(ce.activation_fn).__name__,
        "truncated_pair": {"document": 3, "max_length": 24, "input_ids": cut["input_ids"], "token_type_ids": cut["token_type_ids"]},
        "conventions": {
            "input_ids": "tokenizer(query, document): the pair template [CLS] q [SEP] d [SEP], token types 0 then 1",
            "cls_hidden": "the encoder's last hidden state at position 0 ([CLS]), before the pooler",
            "logit": "classifier(tanh(pooler.dense(cls_hidden))), the model's raw output",
            "scores": "CrossEncoder.predict(pairs): the logit through the default activation for one label (Sigmoid)",
            "truncated_pair": "tokenizer(query, documents[3], truncation='longest_first', max_length=24)",
        },
        "produced_with": versions(),
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"), ensure_ascii=False)
    with open(os.path.join(path, "README.md"), "w") as f:
        f.write(f"""# bert-cross-encoder-tiny: a random-weight cross-encoder reranker

A test fixture for weft's reranking (issue #32): a `BertForSequenceClassification` with one label
(the shape of bge-reranker and ms-marco cross-encoders), hidden 32, 2 layers, 4 heads, MLP 64, a
WordPiece vocabulary of the fixture's own words and characters, random float32 weights (seed
{seed}), saved by sentence-transformers' `CrossEncoder`. `reference.json` holds per pair the
encoder's [CLS] state, the raw logit and `CrossEncoder.predict()`'s score (its `conventions` say
how). Made with sentence-transformers {sentence_transformers.__version__}, transformers {transformers.__version__}, torch {torch.__version__} by

    {COMMAND}
""")
    print("bert-cross-encoder-tiny:", sorted(os.listdir(path)))


def build_xlmr_cross_encoder(out_dir, seed):
    from transformers import XLMRobertaConfig, XLMRobertaForSequenceClassification, XLMRobertaTokenizerFast
    from xlmr_fixture import build_tokenizer as build_unigram
    path = os.path.join(out_dir, "xlmr-cross-encoder-tiny")
    shutil.rmtree(path, ignore_errors=True)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    core, _ = build_unigram(seed, [QUERY, *DOCUMENTS])
    with tempfile.TemporaryDirectory() as tmp:
        tok = XLMRobertaTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                      cls_token="<s>", unk_token="<unk>", pad_token="<pad>")
        tok.model_max_length = 128
        tok.save_pretrained(tmp)
        config = XLMRobertaConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, max_position_embeddings=258, type_vocab_size=1, num_labels=1,
                                  layer_norm_eps=1e-5, pad_token_id=1, bos_token_id=0, eos_token_id=2)
        config.architectures = ["XLMRobertaForSequenceClassification"]
        model = XLMRobertaForSequenceClassification(config).to(torch.float32)
        randomize(model, gen)
        model.save_pretrained(tmp, safe_serialization=True)
        ce = CrossEncoder(tmp, device="cpu", max_length=128)
        ce.save(path)
    ce = CrossEncoder(path, device="cpu")
    ce.eval()
    hf, tok = ce.model, ce.tokenizer
    pairs = [[QUERY, doc] for doc in DOCUMENTS]
    with torch.no_grad():
        predicted = ce.predict(pairs, convert_to_numpy=True, batch_size=len(pairs)).tolist()
        rows = []
        for query, doc in pairs:
            enc = tok(query, doc, return_tensors="pt")
            out = hf(**enc, output_hidden_states=True)
            rows.append({"input_ids": enc["input_ids"][0].tolist(), "cls_hidden": out.hidden_states[-1][0, 0].tolist(),
                         "logit": out.logits[0, 0].item()})
    ref = {
        "model": "xlmr-cross-encoder-tiny (random weights)",
        "seed": seed,
        "query": QUERY,
        "documents": DOCUMENTS,
        "pairs": rows,
        "scores": predicted,
        "activation": type(ce.activation_fn).__name__,
        "conventions": {
            "input_ids": "tokenizer(query, document): the pair template <s> q </s> </s> d </s>, one token type",
            "cls_hidden": "the encoder's last hidden state at position 0 (<s>)",
            "logit": "classifier.out_proj(tanh(classifier.dense(cls_hidden))), the model's raw output",
            "scores": "CrossEncoder.predict(pairs): the logit through the default activation for one label (Sigmoid)",
        },
        "produced_with": versions(),
    }
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"), ensure_ascii=False)
    with open(os.path.join(path, "README.md"), "w") as f:
        f.write(f"""# xlmr-cross-encoder-tiny: a random-weight XLM-RoBERTa cross-encoder reranker

A test fixture for weft's reranking (issue #32): an `XLMRobertaForSequenceClassification` with one
label (the shape of bge-reranker-base / -v2-m3), hidden 32, 2 layers, 4 heads, MLP 64, 258 position
rows from padding index 1, one token type, a Unigram tokenizer built from the pairs' words, random
float32 weights (seed {seed}), saved by sentence-transformers' `CrossEncoder`. `reference.json` holds
per pair the encoder's <s> state, the raw logit and `CrossEncoder.predict()`'s score. Made with
sentence-transformers {sentence_transformers.__version__}, transformers {transformers.__version__}, torch {torch.__version__} by

    {COMMAND}
""")
    print("xlmr-cross-encoder-tiny:", sorted(os.listdir(path)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "test", "fixtures"))
    ap.add_argument("--only", help="build this fixture alone (its folder name)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    builds = {
        "qwen3-rerank-tiny": lambda: build_qwen3_reranker(args.out, 3203),
        "bert-cross-encoder-tiny": lambda: build_cross_encoder(args.out, 3207),
        "xlmr-cross-encoder-tiny": lambda: build_xlmr_cross_encoder(args.out, 3208),
    }
    if args.only is not None and args.only not in builds:
        ap.error(f"--only: one of {', '.join(builds)}")
    for name, build in builds.items():
        if args.only in (None, name):
            build()


if __name__ == "__main__":
    main()
