"""A plain reference BPE encoder for weft-demo's tokenizer.json (rank-ordered merges), used to
check that the JavaScript and Rust tokenizers encode the way the trainer meant."""
import json

from make_tokenizer import SPECIAL_RE, SPLIT_RE, BYTE_CHAR


class ReferenceBPE:
    def __init__(self, path):
        tj = json.load(open(path))
        self.vocab = tj["model"]["vocab"]
        self.ranks = {tuple(m): i for i, m in enumerate(tj["model"]["merges"])}
        self.added = {t["content"]: t["id"] for t in tj["added_tokens"]}

    def encode_word(self, word):
        symbols = list(word)
        while len(symbols) > 1:
            best = min(range(len(symbols) - 1), key=lambda i: self.ranks.get((symbols[i], symbols[i + 1]), 1 << 30))
            if (symbols[best], symbols[best + 1]) not in self.ranks:
                break
            symbols[best:best + 2] = [symbols[best] + symbols[best + 1]]
        return [self.vocab[s] for s in symbols]

    def encode(self, text):
        ids, pos = [], 0
        for m in list(SPECIAL_RE.finditer(text)) + [None]:
            end = m.start() if m else len(text)
            for piece in SPLIT_RE.findall(text[pos:end]):
                ids += self.encode_word("".join(BYTE_CHAR[b] for b in piece.encode("utf-8")))
            if m:
                ids.append(self.added[m.group(0)])
                pos = m.end()
        return ids
