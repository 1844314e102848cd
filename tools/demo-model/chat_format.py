"""The weft-demo chat format, rendered in plain Python.

chat_template.jinja renders exactly the same text (check_format.py and weft's tests compare them);
this file exists so that training and evaluation do not depend on a Jinja engine, and so it can
say which characters of a conversation the model is trained to produce.

Format (Qwen3 roles, qwen3coder tool calls):

    <|im_start|>system
    {system text}

    # Tools
    ...<tools>
    {one JSON line per tool}
    </tools>
    ...<|im_end|>
    <|im_start|>user
    {question}<|im_end|>
    <|im_start|>assistant
    <think>
    {reasoning}
    </think>

    <tool_call>
    <function=NAME>
    <parameter=KEY>
    VALUE
    </parameter>
    </function>
    </tool_call><|im_end|>
    <|im_start|>tool
    {result}<|im_end|>
    <|im_start|>assistant
    <think>
    {reasoning}
    </think>

    {answer}<|im_end|>

The generation prompt is "<|im_start|>assistant\n": the model itself writes "<think>".
Assistant messages before the last user message are rendered without their reasoning.
"""
import json

DEFAULT_SYSTEM = "You are Weft Demo, a small assistant that can use tools."

TOOLS_HEADER = (
    "\n\n# Tools\n\nYou can call these functions, described in JSON:\n<tools>"
)
TOOLS_FOOTER = (
    "\n</tools>\n\nTo call a function, write:\n<tool_call>\n<function=NAME>\n<parameter=KEY>\nVALUE\n"
    "</parameter>\n</function>\n</tool_call>"
)


def to_json(value):
    """Python's json.dumps as Hugging Face's `tojson` filter uses it (", " and ": " separators)."""
    return json.dumps(value, ensure_ascii=False)


def render_value(value):
    return value if isinstance(value, str) else to_json(value)


def render_tool_call(call):
    fn = call["function"]
    out = "<tool_call>\n<function=" + fn["name"] + ">\n"
    for key, value in fn["arguments"].items():
        out += "<parameter=" + key + ">\n" + render_value(value) + "\n</parameter>\n"
    return out + "</function>\n</tool_call>"


def render_assistant(message, with_reasoning):
    out = ""
    if with_reasoning:
        out += "<think>\n" + (message.get("reasoning_content") or message.get("reasoning") or "") + "\n</think>\n\n"
    content = message.get("content") or ""
    out += content
    for i, call in enumerate(message.get("tool_calls") or []):
        if i > 0:
            out += "\n"
        elif content:
            out += "\n\n"
        out += render_tool_call(call)
    return out


def render(messages, tools=None, add_generation_prompt=False):
    """Returns (text, spans): spans are (start, end) character ranges of the assistant output the
    model is trained on: each assistant message after the last user message, from "<think>" to
    its "<|im_end|>" inclusive."""
    last_user = max((i for i, m in enumerate(messages) if m["role"] == "user"), default=-1)
    text = "<|im_start|>system\n"
    first = 0
    if messages and messages[0]["role"] == "system":
        text += messages[0]["content"]
        first = 1
    else:
        text += DEFAULT_SYSTEM
    if tools:
        text += TOOLS_HEADER
        for tool in tools:
            text += "\n" + to_json(tool)
        text += TOOLS_FOOTER
    text += "<|im_end|>\n"
    spans = []
    for i in range(first, len(messages)):
        m = messages[i]
        role = m["role"]
        if role == "assistant":
            text += "<|im_start|>assistant\n"
            start = len(text)
            text += render_assistant(m, with_reasoning=i > last_user) + "<|im_end|>"
            if i > last_user:
                spans.append((start, len(text)))
            text += "\n"
        elif role in ("user", "tool", "system"):
            text += "<|im_start|>" + role + "\n" + m["content"] + "<|im_end|>\n"
        else:
            raise ValueError("unknown role " + role)
    if add_generation_prompt:
        text += "<|im_start|>assistant\n"
    return text, spans
