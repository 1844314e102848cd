"""Checks that chat_template.jinja (rendered the way Hugging Face transformers renders chat
templates) gives exactly chat_format.render's text, on generated conversations and their prefixes."""
import json
import sys

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

import chat_format
import datagen
from tool_impl import TOOLS


def hf_environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = lambda x, indent=None, separators=None, sort_keys=False: json.dumps(
        x, ensure_ascii=False, indent=indent, separators=separators, sort_keys=sort_keys)
    return env


def main():
    template = hf_environment().from_string(open(sys.argv[1] if len(sys.argv) > 1 else "chat_template.jinja").read())
    checked = 0
    for messages in datagen.generate(123, 300):
        for k in range(1, len(messages) + 1):
            prefix = messages[:k]
            for gen in (False, True):
                want, _ = chat_format.render(prefix, TOOLS, add_generation_prompt=gen)
                got = template.render(messages=prefix, tools=TOOLS, add_generation_prompt=gen)
                if got != want:
                    print("MISMATCH", json.dumps(prefix)[:300])
                    print(repr(want[-300:]))
                    print(repr(got[-300:]))
                    sys.exit(1)
                checked += 1
    # no tools, and a custom system message
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    assert template.render(messages=msgs, add_generation_prompt=True) == chat_format.render(msgs, None, True)[0]
    print("template matches chat_format on", checked, "renders")


if __name__ == "__main__":
    main()
