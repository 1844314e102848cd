"""The BERT encoder fixture (bert-embed-tiny) for make_fixtures.py: a random-weight BertModel with a
WordPiece tokenizer built here, saved by sentence-transformers with mean pooling and Normalize, and its
reference vectors and token ids.

The tokenizer is made offline with the `tokenizers` package: BertNormalizer (clean text, Chinese
characters split, strip accents, lowercase), BertPreTokenizer, a WordPiece model over a small vocabulary
(special tokens, single characters and their ## forms, some whole words and pieces) and a
TemplateProcessing post-processor: [CLS] A [SEP] (type 0), pair [CLS] A [SEP] B [SEP] (B of type 1),
as BERT checkpoints' tokenizer.json files have them.
"""
import json
import os
import shutil
import tempfile

import torch
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import BertConfig, BertModel, BertTokenizerFast

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "quick", "brown", "fox", "jump", "##s", "over", "lazy", "dog", "hello", "world", "cache", "##d",
         "block", "##ing", "embed", "##ding", "token", "##izer", "un", "##believ", "##able", "cafe", "naive",
         "emigre", "search", "query", "passage", "text", "model", "weft", "batch", "a", "an", "and", "of", "is",
         "in", "to", "it", "that", "for", "on", "with", "what", "##ed", "##er", "##ly", "##es", "##tion"]
# Chinese characters (the normalizer puts spaces around each) and a few other scripts' letters.
EXTRA_CHARS = "東京日本中文字αβγδ"

TOKENIZER_TEXTS = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    "UNBELIEVABLE unbelievably Unbelievable",
    "émigré naïve café Ångström",
    "e\u0301 (a combining accent) and \u00e9 precomposed",
    "東京は日本の首都です。中文字",
    "tabs\tand\nnewlines\r\nand   runs of spaces",
    "control\u0000chars\u0007and\u200bzero\ufeffwidth",
    "non\u00a0breaking\u2003spaces",
    "punctuation: don't stop—ever! ¿qué? «quotes» (brackets) [x] {y} @#$%^&*_+=~`|\\/<>",
    "numbers 3.14159 and 1,000,000 and 42nd",
    "emoji 🙂🚀 and symbols ™ © ° are unknown",
    "a" * 101,
    "x" * 99 + " " + "y" * 100 + " " + "z" * 120,
    "mixedCASE WordsWith##hashes ##leading",
    "Ελληνικά αβγδ and кириллица",
    "",
    "   ",
]

TOKENIZER_VARIANTS = {
    "cased": normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=False),
    "strip_accents_cased": normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=False),
    "lowercase_keep_accents": normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=True),
    "no_chinese_no_clean": normalizers.BertNormalizer(clean_text=False, handle_chinese_chars=False, strip_accents=None, lowercase=True),
}

EMBED_TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "hello",
    "Embedding tokenizers and cached blocks in a batch.",
    "A much longer text, so that it spans many tokens of the model's context window: " * 2,
    "émigré naïve café, 東京 and 🙂 emoji",
    "what is weft?",
]

PAIR = ("what is weft?", "weft runs continuous batching in TypeScript.")

README = """# bert-embed-tiny: a random-weight BERT encoder embedder

A test fixture for weft's encoder models (issue #32), laid out as all-MiniLM / bge / e5 publish
theirs: a bare `BertModel` (`config.json` architectures `[BertModel]`, `hidden_act` "gelu", absolute
positions, 2 token types) saved by sentence-transformers with a Transformer -> Pooling (mean) ->
Normalize pipeline, and a WordPiece `tokenizer.json` built offline by the recipe (BertNormalizer,
BertPreTokenizer, WordPiece with `##` pieces, [CLS] / [SEP] template).

Hidden 32, 2 layers, 4 heads of 8, MLP 64, vocabulary {vocab}, 256 positions, random float32 weights
(seed {seed}). Made by

    {command}

with sentence-transformers {st}, transformers {tf}, tokenizers {tk}, torch {torch}, on the CPU in float32.
`reference.json` holds the embedding texts' `encode()` output one text at a time and batched, the
unnormalised mean and CLS poolings, the token ids of `tokenizer_texts` as the Python `tokenizers`
package encodes them, and a text pair's ids, type ids and CLS state; its `conventions` say how.
"""


def build_tokenizer():
    chars = sorted(set("abcdefghijklmnopqrstuvwxyz0123456789.,!?;:'\"()[]{}-_@#$%^&*+=~`|\\/<>¿«»—。は") | set(EXTRA_CHARS))
    vocab = {}
    for token in SPECIALS + chars + ["##" + c for c in chars if c.isalnum()] + WORDS:
        vocab.setdefault(token, len(vocab))
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls, sep = vocab["[CLS]"], vocab["[SEP]"]
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece(prefix="##")
    return tok, len(vocab)


def randomize(model, gen):
    """Weights large enough that the states spread; LayerNorm weights and biases away from 1 and 0."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm.weight" in name:
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "embeddings" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * (1.2 / p.shape[-1] ** 0.5))


def st_references(st, texts=EMBED_TEXTS):
    """What every encoder fixture's reference.json holds, from the saved SentenceTransformer: per text its
    token ids, encode() alone, encode() of all texts as one padded batch, and the unnormalised mean and
    first-token states of the last layer."""
    st.eval()
    with torch.no_grad():
        alone = [st.encode([t], convert_to_numpy=True)[0].tolist() for t in texts]
        batched = st.encode(texts, convert_to_numpy=True, batch_size=len(texts)).tolist()
        hf, tok = st[0].model, st.tokenizer
        ids, mean, first = [], [], []
        for text in texts:
            enc = tok(text, return_tensors="pt")
            hidden = hf(**enc).last_hidden_state[0].float()
            ids.append(enc["input_ids"][0].tolist())
            mean.append(hidden.mean(dim=0).tolist())
            first.append(hidden[0].tolist())
    return ids, alone, batched, mean, first


def write_fixture(path, ref, readme, versions, **fields):
    """reference.json and README.md of a fixture folder; the README template takes the versions and `fields`."""
    with open(os.path.join(path, "reference.json"), "w") as f:
        json.dump(ref, f, separators=(",", ":"), ensure_ascii=False)
    with open(os.path.join(path, "README.md"), "w") as f:
        f.write(readme.format(st=versions["sentence_transformers"], tf=versions["transformers"], tk=versions["tokenizers"],
                              torch=versions["torch"], **fields))


def build_bert(out_dir, seed, versions, command):
    path = os.path.join(out_dir, "bert-embed-tiny")
    shutil.rmtree(path, ignore_errors=True)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # what transformers initialises itself (an unused pooler) is the same on every run
    core, vocab = build_tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        fast = BertTokenizerFast(tokenizer_object=core, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                                 cls_token="[CLS]", mask_token="[MASK]", do_lower_case=True)
        fast.save_pretrained(tmp)
        config = BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                            intermediate_size=64, hidden_act="gelu", max_position_embeddings=256, type_vocab_size=2,
                            layer_norm_eps=1e-12, pad_token_id=0)
        model = BertModel(config, add_pooling_layer=False).to(torch.float32)
        randomize(model, gen)
        model.save_pretrained(tmp, safe_serialization=True)
        transformer = Transformer(tmp, max_seq_length=256)
        st = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean"), Normalize()])
        st.save(path)
    st = SentenceTransformer(path, device="cpu")
    ids, alone, batched, mean, cls = st_references(st)
    with torch.no_grad():
        pair = st.tokenizer(*PAIR, return_tensors="pt")
        pair_cls = st[0].model(**pair).last_hidden_state[0, 0].float().tolist()
    saved = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
    tokenizer_ids = [saved.encode(t).ids for t in TOKENIZER_TEXTS]
    tokenizer_plain = [saved.encode(t, add_special_tokens=False).ids for t in TOKENIZER_TEXTS]
    # The same vocabulary under the other BertNormalizer settings published checkpoints use (cased models,
    # accents kept or stripped without lowercasing, no Chinese split): the normalizer as tokenizer.json
    # writes it, and the ids the Python package gives under it.
    variants = {}
    for name, normalizer in TOKENIZER_VARIANTS.items():
        variant = Tokenizer.from_str(saved.to_str())
        variant.normalizer = normalizer
        variants[name] = {"normalizer": json.loads(variant.to_str())["normalizer"],
                          "ids": [variant.encode(t).ids for t in TOKENIZER_TEXTS]}
    ref = {
        "model": "bert-embed-tiny (random weights)",
        "seed": seed,
        "texts": EMBED_TEXTS,
        "token_ids": ids,
        "embeddings": alone,
        "embeddings_batched": batched,
        "mean_unnormalized": mean,
        "cls_unnormalized": cls,
        "tokenizer_texts": TOKENIZER_TEXTS,
        "tokenizer_ids": tokenizer_ids,
        "tokenizer_ids_plain": tokenizer_plain,
        "tokenizer_variants": variants,
        "pair": {"texts": list(PAIR), "token_ids": pair["input_ids"][0].tolist(),
                 "token_type_ids": pair["token_type_ids"][0].tolist(), "cls_unnormalized": pair_cls},
        "conventions": {
            "embeddings": "SentenceTransformer(folder).encode([text]) per text: mean pooling, L2-normalised, float32",
            "embeddings_batched": "encode(texts, batch_size=len(texts)): the texts padded into one batch",
            "mean_unnormalized": "mean of every token's last hidden state (the last layer's output LayerNorm)",
            "cls_unnormalized": "the first ([CLS]) token's last hidden state",
            "tokenizer_ids": "tokenizers.Tokenizer.from_file(tokenizer.json).encode(text).ids ([CLS] ... [SEP])",
            "tokenizer_ids_plain": "the same with add_special_tokens=False",
            "tokenizer_variants": "tokenizer.json with its normalizer replaced by `normalizer`: encode(text).ids",
            "pair": "tokenizer(a, b): [CLS] a [SEP] b [SEP] with token_type_ids 1 on b's part; BertModel's CLS state",
        },
        "produced_with": dict(versions, command=command),
    }
    write_fixture(path, ref, README, versions, vocab=vocab, seed=seed, command=command)
    print("bert-embed-tiny:", sorted(os.listdir(path)))
