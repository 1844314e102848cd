"""The NomicBert encoder fixture (nomic-embed-tiny) for make_fixtures.py: a random-weight NomicBertModel
(transformers 5 has it built in, no remote code) with bert_fixture.py's WordPiece tokenizer, saved by
sentence-transformers with mean pooling and Normalize, as nomic-embed publishes its models; with reference
vectors. transformers writes its tensors in the published layout (emb_ln, encoder.layers.N.attn.Wqkv,
mlp.fc11 / fc12 / fc2, norm1 / norm2) and its config in transformers 5's names.
"""
import json
import os
import shutil
import tempfile

import torch
from bert_fixture import EMBED_TEXTS, build_tokenizer, st_references, write_fixture
from sentence_transformers import SentenceTransformer
from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
from transformers import BertTokenizerFast, NomicBertConfig, NomicBertModel

README = """# nomic-embed-tiny: a random-weight NomicBert encoder embedder

A test fixture for weft's encoder models (issue #32), laid out as nomic-embed publishes its models:
a `NomicBertModel` (rotary positions with base 1000, a SwiGLU MLP, no biases but the LayerNorms', q, k
and v fused in one `Wqkv` tensor, post-norm) saved by sentence-transformers with a Transformer -> Pooling
(mean) -> Normalize pipeline, and bert-embed-tiny's WordPiece tokenizer.

Hidden 32, 2 layers, 4 heads of 8, MLP 48, vocabulary {vocab}, random float32 weights (seed {seed}).
transformers 5 builds the model itself (no remote code) and writes the config in its own names
(`hidden_size`, `rope_parameters`, `hidden_act: "silu"`); the tensors keep the published names. Made by

    {command}

with sentence-transformers {st}, transformers {tf}, torch {torch}, on the CPU in float32. `reference.json`
holds the texts' `encode()` output one at a time and batched, and the unnormalised mean and CLS states.
"""


def randomize(model, gen):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "layernorm.weight" in name.lower():
                p.copy_(1.0 + 0.3 * torch.randn(p.shape, generator=gen))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "embeddings" in name:
                p.copy_(torch.randn(p.shape, generator=gen))
            else:
                p.copy_(torch.randn(p.shape, generator=gen) * (1.2 / p.shape[-1] ** 0.5))


def build_nomic(out_dir, seed, versions, command):
    path = os.path.join(out_dir, "nomic-embed-tiny")
    shutil.rmtree(path, ignore_errors=True)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)  # what transformers initialises itself (an unused pooler) is the same on every run
    core, vocab = build_tokenizer()
    with tempfile.TemporaryDirectory() as tmp:
        fast = BertTokenizerFast(tokenizer_object=core, unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]",
                                 cls_token="[CLS]", mask_token="[MASK]", do_lower_case=True)
        fast.save_pretrained(tmp)
        config = NomicBertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                                 intermediate_size=48, max_position_embeddings=256, type_vocab_size=2,
                                 layer_norm_eps=1e-12, rope_parameters={"rope_type": "default", "rope_theta": 1000.0})
        model = NomicBertModel(config).to(torch.float32)
        randomize(model, gen)
        model.save_pretrained(tmp, safe_serialization=True)
        transformer = Transformer(tmp, max_seq_length=256)
        st = SentenceTransformer(modules=[transformer, Pooling(32, pooling_mode="mean"), Normalize()])
        st.save(path)
    ids, alone, batched, mean, cls = st_references(SentenceTransformer(path, device="cpu"))
    ref = {
        "model": "nomic-embed-tiny (random weights)",
        "seed": seed,
        "texts": EMBED_TEXTS,
        "token_ids": ids,
        "embeddings": alone,
        "embeddings_batched": batched,
        "mean_unnormalized": mean,
        "cls_unnormalized": cls,
        "conventions": {
            "embeddings": "SentenceTransformer(folder).encode([text]) per text: mean pooling, L2-normalised, float32",
            "embeddings_batched": "encode(texts, batch_size=len(texts)): the texts padded into one batch",
            "mean_unnormalized": "mean of every token's last hidden state (the last layer's post-MLP LayerNorm)",
            "cls_unnormalized": "the first ([CLS]) token's last hidden state",
        },
        "produced_with": dict(versions, command=command),
    }
    write_fixture(path, ref, README, versions, vocab=vocab, seed=seed, command=command)
    print("nomic-embed-tiny:", sorted(os.listdir(path)))
