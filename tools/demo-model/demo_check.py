"""Runs the demo's questions through a full agent loop with transformers (greedy; tools executed by
tool_impl) and prints the transcripts: python3 demo_check.py <model dir>"""
import json
import sys

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM

import chat_format
from evaluate import generate_all, parse_output
from tool_impl import TOOLS, run_tool, result_text


def main():
    model_dir = sys.argv[1]
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    model = AutoModelForCausalLM.from_pretrained(model_dir, attn_implementation="eager").to("cuda", torch.float32).eval()
    eos, pad = tok.token_to_id("<|im_end|>"), tok.token_to_id("<|endoftext|>")
    for q in json.load(open("demo_questions.json")):
        messages = [{"role": "user", "content": q}]
        print("USER:", q)
        for _ in range(3):
            out = generate_all(model, tok, [chat_format.render(messages, TOOLS, True)[0]], eos, pad, 1)[0]
            reasoning, content, calls = parse_output(out)
            print("  THINK:", reasoning)
            messages.append({"role": "assistant", "content": content, "reasoning_content": reasoning,
                             "tool_calls": [{"type": "function", "function": c} for c in calls]})
            if not calls:
                print("  ANSWER:", content)
                break
            for c in calls:
                res = result_text(run_tool(c["name"], c["arguments"]))
                print("  CALL:", json.dumps(c), "->", res)
                messages.append({"role": "tool", "content": res})


if __name__ == "__main__":
    main()
