"""Writes conversations with their expected renders (JSONL) for the JavaScript checks."""
import json
import sys

import chat_format
import datagen
from tool_impl import TOOLS

out = open(sys.argv[1], "w")
for messages in datagen.generate(int(sys.argv[2]) if len(sys.argv) > 2 else 321, 200):
    for k in range(1, len(messages) + 1):
        for gen in (False, True):
            text, _ = chat_format.render(messages[:k], TOOLS, gen)
            out.write(json.dumps({"messages": messages[:k], "add_generation_prompt": gen, "text": text}) + "\n")
