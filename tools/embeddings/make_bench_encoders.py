"""Build the random-weight BERT encoders bench/embed compares weft and transformers.js on.

Makes, under --out (default bench/embed/.models), one folder per shape:

  minilm-l6-shape   all-MiniLM-L6-v2's shape: hidden 384, 6 layers, 12 heads, FFN 1536
  bge-base-shape    bge-base-en-v1.5's shape: hidden 768, 12 layers, 12 heads, FFN 3072

Each folder is what both engines read, with the same weights:
  config.json + model.safetensors (BertModel, float32), as transformers saves it;
  modules.json, 1_Pooling (mean), 2_Normalize, as sentence-transformers saves it;
  tokenizer.json + tokenizer_config.json: a WordPiece tokenizer of 30,522 entries (BERT's size),
    trained here on seeded pseudo-words (no download), with BERT's normaliser and [CLS]/[SEP];
  onnx/model.onnx: the same BertModel exported by torch.onnx (inputs input_ids, attention_mask,
    token_type_ids; output last_hidden_state), where transformers.js looks for it.
  texts.json: the bench's texts, 16 and 256 tokens long with [CLS] and [SEP] (checked here).

Random weights make the vectors meaningless but the work identical to the real models'. Needs
PyTorch, transformers, tokenizers, onnx and onnxscript (a recipe for benchmarks, never CI):

    nice python3 tools/embeddings/make_bench_encoders.py
"""
import argparse
import json
import os
import random

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import BertConfig, BertModel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SHAPES = {
    "minilm-l6-shape": dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536),
    "bge-base-shape": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072),
}
VOCAB_SIZE = 30522
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXT_TOKENS = (16, 256)
TEXTS_PER_LENGTH = 256


def pseudo_words(rng, count):
    syllables = [c + v for c in "bcdfghjklmnprstvwz" for v in "aeiou"] + ["th", "st", "qu", "ing", "er"]
    return ["".join(rng.choice(syllables) for _ in range(rng.choice((1, 1, 2, 2, 3, 4)))) for _ in range(count)]


def make_tokenizer(rng):
    """BERT's pipeline (normaliser, pre-tokeniser, WordPiece, [CLS] A [SEP]) over a vocabulary
    trained on pseudo-word sentences with punctuation and digits."""
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    words = pseudo_words(rng, 40000)
    corpus = [" ".join(rng.choice(words) for _ in range(12)) + rng.choice([".", ",", "!", "?", " 42", " 7."]) for _ in range(60000)]
    tok.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=VOCAB_SIZE, special_tokens=SPECIALS, min_frequency=1))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    return tok, words


def make_texts(rng, tok, words):
    """TEXTS_PER_LENGTH texts of exactly n tokens (with [CLS] and [SEP]) for each n in TEXT_TOKENS."""
    texts = {}
    for n in TEXT_TOKENS:
        out = []
        while len(out) < TEXTS_PER_LENGTH:
            text = ""
            while len(tok.encode(text).ids) < n:
                text += (" " if text else "") + rng.choice(words)
            while len(tok.encode(text).ids) > n:
                text = text[:-1].rstrip()
            if len(tok.encode(text).ids) == n:
                out.append(text)
        texts[str(n)] = out
    return texts


def write_sentence_transformers_files(folder, hidden):
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
              open(os.path.join(folder, "modules.json"), "w"), indent=2)
    os.makedirs(os.path.join(folder, "1_Pooling"), exist_ok=True)
    os.makedirs(os.path.join(folder, "2_Normalize"), exist_ok=True)
    json.dump({"word_embedding_dimension": hidden, "pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True,
               "pooling_mode_max_tokens": False, "pooling_mode_mean_sqrt_len_tokens": False},
              open(os.path.join(folder, "1_Pooling", "config.json"), "w"), indent=2)


def export_onnx(model, folder):
    os.makedirs(os.path.join(folder, "onnx"), exist_ok=True)
    ids = torch.ones(2, 16, dtype=torch.long)
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    torch.onnx.export(
        model, (ids, torch.ones_like(ids), torch.zeros_like(ids)), os.path.join(folder, "onnx", "model.onnx"),
        input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
        dynamic_shapes=({0: batch, 1: seq}, {0: batch, 1: seq}, {0: batch, 1: seq}), dynamo=True, external_data=False)


class LastHiddenState(torch.nn.Module):
    """BertModel with one output, as transformers.js's feature-extraction reads it."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "embed", ".models"))
    ap.add_argument("--shapes", default=",".join(SHAPES))
    args = ap.parse_args()
    rng = random.Random(0)
    tok, words = make_tokenizer(rng)
    texts = make_texts(rng, tok, words)
    for name in args.shapes.split(","):
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        torch.manual_seed(0)
        config = BertConfig(vocab_size=VOCAB_SIZE, max_position_embeddings=512, type_vocab_size=2, hidden_act="gelu",
                            pad_token_id=0, **SHAPES[name])
        config.architectures = ["BertModel"]
        model = BertModel(config, add_pooling_layer=False).eval()
        model.save_pretrained(folder, safe_serialization=True)
        tok.save(os.path.join(folder, "tokenizer.json"))
        json.dump({"tokenizer_class": "BertTokenizerFast", "do_lower_case": True, "model_max_length": 512,
                   "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "unk_token": "[UNK]", "mask_token": "[MASK]"},
                  open(os.path.join(folder, "tokenizer_config.json"), "w"), indent=2)
        write_sentence_transformers_files(folder, config.hidden_size)
        with torch.no_grad():
            export_onnx(LastHiddenState(model), folder)
        json.dump(texts, open(os.path.join(folder, "texts.json"), "w"))
        print(f"wrote {folder}")


if __name__ == "__main__":
    main()
