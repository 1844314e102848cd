"""The XLM-RoBERTa encoder fixture (xlmr-embed-tiny) for make_fixtures.py: a random-weight XLMRobertaModel
laid out as multilingual-e5 / bge-m3 publish theirs, with a Unigram (SentencePiece-style) tokenizer built
here, saved by sentence-transformers with mean pooling and Normalize; with reference vectors and ids.

What differs from BERT, and what the fixture is for: positions start at padding_idx + 1 (token i reads row
padding_idx + 1 + i of the position table), one token type, <s> ... </s> around a text, and a Unigram
tokenizer (Metaspace "▁" pieces, scores) instead of WordPiece.

The tokenizer is a Unigram model built here from the texts' words (unigram_pieces), with XLM-R's
special tokens in its order (<s> 0, <pad> 1, </s> 2, <unk> 3), an NFKC normaliser (the
published files carry SentencePiece's precompiled nmt_nfkc map, which only a SentencePiece model gives),
Metaspace pre-tokenisation, and the published files' template: <s> A </s>, pairs <s> A </s> </s> B </s>.
"""
import json
import os
import unicodedata
import shutil
import tempfile

import torch
from bert_fixture import EMBED_TEXTS, TOKENIZER_TEXTS, randomize, st_references, write_fixture
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
from transformers import XLMRobertaConfig, XLMRobertaModel, XLMRobertaTokenizerFast

SPECIALS = ["<s>", "<pad>", "</s>", "<unk>"]
PAD_ID = 1

README = """# xlmr-embed-tiny: a random-weight XLM-RoBERTa encoder embedder

A test fixture for weft's encoder models (issue #32), laid out as multilingual-e5 / bge-m3 publish
theirs: a bare `XLMRobertaModel` (absolute positions offset by `pad_token_id` + 1 = 2, one token type,
GELU) saved by sentence-transformers with a Transformer -> Pooling (mean) -> Normalize pipeline, and a
Unigram `tokenizer.json` built offline by the recipe (NFKC, Metaspace, `<s> ... </s>`).

Hidden 32, 2 layers, 4 heads of 8, MLP 64, vocabulary {vocab}, 130 position rows (128 positions),
random float32 weights (seed {seed}). Made by

    {command}

with sentence-transformers {st}, transformers {tf}, tokenizers {tk}, torch {torch}, on the CPU in float32.
`reference.json` holds the texts' `encode()` output one at a time and batched, the unnormalised mean and
first-token states, and the Python `tokenizers` package's ids for `tokenizer_texts`.
"""


def unigram_pieces(texts):
    """A deterministic Unigram vocabulary over the texts (the package's UnigramTrainer is not
    deterministic from run to run): whole words with "▁" (score -2), their first halves with "▁" and
    second halves without (-3), and every single character (-6), so Viterbi picks whole words where
    it can, halves next, characters last; a character never seen is <unk>."""
    words = sorted({w for t in texts for w in unicodedata.normalize("NFKC", t).split()})
    pieces = {}
    for w in words:
        pieces.setdefault("\u2581" + w, -2.0)
        if len(w) >= 4:
            pieces.setdefault("\u2581" + w[: len(w) // 2], -3.0)
            pieces.setdefault(w[len(w) // 2:], -3.0)
    for c in sorted({c for w in words for c in w} | {"\u2581"}):
        pieces.setdefault(c, -6.0)
    return sorted(pieces.items())


def build_tokenizer(seed, texts=EMBED_TEXTS + TOKENIZER_TEXTS[:12]):
    del seed  # the vocabulary is a function of the texts alone
    vocab = [(t, 0.0) for t in SPECIALS] + unigram_pieces(texts)
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
    tok.add_special_tokens(SPECIALS)
    ids = tok.get_vocab()
    assert [ids[t] for t in SPECIALS] == [0, 1, 2, 3], "XLM-R's special-token order"
    tok.post_processor = processors.TemplateProcessing(single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
                                                       special_tokens=[("<s>", 0), ("</s>", 2)])
    return tok, tok.get_vocab_size()


def build_xlmr(out_dir, seed, versions, command):
    path = os.path.join(out_dir, "xlmr-embed-tiny")
    shutil.rmtree(path, ignore_errors=True)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    core, vocab = build_tokenizer(seed)
    with tempfile.TemporaryDirectory() as tmp:
        fast = XLMRobertaTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                       cls_token="<s>", unk_token="<unk>", pad_token="<pad>")
        fast.model_max_length = 128
        fast.save_pretrained(tmp)
        vocab = len(fast)  # with <mask>, which XLM-R keeps as its last id
        config = XLMRobertaConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                  intermediate_size=64, hidden_act="gelu", max_position_embeddings=130, type_vocab_size=1,
                                  layer_norm_eps=1e-5, pad_token_id=PAD_ID, bos_token_id=0, eos_token_id=2)
        model = XLMRobertaModel(config, add_pooling_layer=False).to(torch.float32)
        randomize(model, gen)
        model.save_pretrained(tmp, safe_serialization=True)
        transformer = Transformer(tmp, max_seq_length=128)
        st = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean"), Normalize()])
        st.save(path)
    ids, alone, batched, mean, first = st_references(SentenceTransformer(path, device="cpu"))
    saved = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
    ref = {
        "model": "xlmr-embed-tiny (random weights)",
        "seed": seed,
        "texts": EMBED_TEXTS,
        "token_ids": ids,
        "embeddings": alone,
        "embeddings_batched": batched,
        "mean_unnormalized": mean,
        "cls_unnormalized": first,
        "tokenizer_texts": TOKENIZER_TEXTS,
        "tokenizer_ids": [saved.encode(t).ids for t in TOKENIZER_TEXTS],
        "conventions": {
            "embeddings": "SentenceTransformer(folder).encode([text]) per text: mean pooling, L2-normalised, float32",
            "embeddings_batched": "encode(texts, batch_size=len(texts)): the texts padded into one batch",
            "mean_unnormalized": "mean of every token's last hidden state",
            "cls_unnormalized": "the first (<s>) token's last hidden state",
            "tokenizer_ids": "tokenizers.Tokenizer.from_file(tokenizer.json).encode(text).ids (<s> ... </s>)",
        },
        "produced_with": dict(versions, command=command),
    }
    write_fixture(path, ref, README, versions, vocab=vocab, seed=seed, command=command)
    print("xlmr-embed-tiny:", sorted(os.listdir(path)))
