"""On a machine with transformers: the Rust tokenizer encodes like the reference BPE encoder (and so
like @huggingface/tokenizers, which check_tokenizer.mjs compares), and transformers'
apply_chat_template renders like chat_format. python3 check_hf.py <model dir> <heldout.jsonl>"""
import json
import sys

from tokenizers import Tokenizer

import chat_format
from bpe_encode import ReferenceBPE
from tool_impl import TOOLS


def main():
    model_dir, heldout = sys.argv[1], sys.argv[2]
    rust = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    ref = ReferenceBPE(f"{model_dir}/tokenizer.json")
    convs = [json.loads(line)["messages"] for line in open(heldout)][:60]
    texts = [chat_format.render(m[:k], TOOLS, g)[0] for m in convs for k in range(1, len(m) + 1) for g in (False, True)]
    texts += ["héllo wörld ☃ 😀", "  two  spaces\n\n\tand tabs ", "x = 3.14159; y = -42"]
    same = sum(rust.encode(t, add_special_tokens=False).ids == ref.encode(t) for t in texts)
    back = sum(rust.decode(rust.encode(t, add_special_tokens=False).ids, skip_special_tokens=False) == t for t in texts)
    print(f"rust tokenizer: {same}/{len(texts)} same ids as reference, {back}/{len(texts)} round trips")
    try:
        from transformers import AutoTokenizer
        hf = AutoTokenizer.from_pretrained(model_dir)
        ok = total = 0
        for m in convs:
            for k in range(1, len(m) + 1):
                for g in (False, True):
                    want = chat_format.render(m[:k], TOOLS, g)[0]
                    got = hf.apply_chat_template(m[:k], tools=TOOLS, tokenize=False, add_generation_prompt=g)
                    ok += got == want
                    total += 1
                    if got != want and total - ok == 1:
                        print("first mismatch:", repr(want[-200:]), repr(got[-200:]))
        print(f"transformers apply_chat_template: {ok}/{total} equal to chat_format")
        ids_ok = sum(hf(t, add_special_tokens=False)["input_ids"] == ref.encode(t) for t in texts)
        print(f"transformers tokenizer ({type(hf).__name__}): {ids_ok}/{len(texts)} same ids as reference")
    except Exception as e:  # report, do not stop training
        print("transformers check failed:", repr(e))


if __name__ == "__main__":
    main()
