import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reasoningParserNames } from '../parsers/registry.js';
import { toolParserNames } from '../tool-formats/registry.js';
import { demoModelPath } from '../package-files.js';
import { SERVE_HELP } from '../serve/command-line.js';
import type { CommandName } from './args.js';

/** The bundled demo model as the user can type it here: relative to the working folder when inside it. */
function demoModelArg(): string {
  let path: string;
  try {
    path = demoModelPath();
  } catch {
    return '<dir>';
  }
  const fromHere = relative(process.cwd(), path);
  const arg = fromHere !== '' && !fromHere.startsWith('..') && !isAbsolute(fromHere) ? fromHere : path;
  return /\s/.test(arg) ? JSON.stringify(arg) : arg;
}

const GENERAL = `weft: in-process LLM generation for Node

Usage:
  weft generate --model <dir> [options] "prompt"   continue a prompt, streaming tokens to stdout
  weft chat --model <dir> [options]                 chat interactively with a model's chat template
  weft embed --model <dir> [options] "text" ...     embed texts, one JSON line per text on stdout
  weft rerank --model <dir> --query <q> "doc" ...   score documents against a query, best first, one JSON line each
  weft demo                                         the built-in demo: a tiny agent that reasons and calls tools
  weft serve --model <dir> [options]                an OpenAI-compatible HTTP server (/v1/chat/completions, /metrics)
  weft doctor [--json]                              versions, CPU kernels, OpenVINO devices and cache layouts, to report
  weft help <command>                               options of one command
  weft --version

A model is a Hugging Face folder: config.json, model.safetensors, tokenizer.json
(and tokenizer_config.json, generation_config.json).
`;

const LOAD_OPTIONS = `  -m, --model <path>       Hugging Face model folder or .gguf file (required)
      --device <d>         cpu (default), auto, or openvino:CPU / openvino:GPU / openvino:AUTO for an IR folder
      --threads <n>        CPU threads (default: all available cores)
      --kv-cache <size>    KV cache size, e.g. 256MB (default: the pipeline's)
  -q, --quiet              no progress bar and no statistics on stderr
  -h, --help               this help`;

const SAMPLING_OPTIONS = `  -n, --max-tokens <n>     most tokens to generate
  -t, --temperature <t>    0 = greedy (default: the model's generation_config.json)
      --top-p <p>          nucleus sampling, in (0, 1]
      --top-k <k>          sample among the k most likely tokens (0 = off)
      --seed <n>           random seed: the same seed gives the same output`;

const commandHelp = (demo: string): Record<CommandName, string> => ({
  serve: SERVE_HELP,
  generate: `Usage: weft generate --model <dir> [options] "prompt"

Continues the prompt and streams the new text to stdout. A progress bar shows
loading on stderr, and the speed (tokens/s) is printed there at the end.
Without a prompt argument, the prompt is read from stdin.

Options:
${LOAD_OPTIONS}
${SAMPLING_OPTIONS}
      --echo               print the prompt before the continuation

A chat model (one with a chat template, like the demo model) continues a bare
prompt poorly: use \`weft chat\` for it.

Example (weft's demo model):
  weft generate --model ${demo} --max-tokens 64 "Once upon a time"
`,
  chat: `Usage: weft chat --model <dir> [options]

An interactive chat using the model's chat template. Type a message and press
Enter. Commands: /tool <result> (the result of the tool call just made),
/reset (forget the conversation), /help, /exit (or Ctrl-D); any other /word is
reported, not sent (type //word to send "/word").
Ctrl-C stops the answer being written; at the > prompt it exits.
Reasoning is shown dimmed, tool calls as "→ name({...})". weft does not run
the tools: type each result with /tool and the model goes on.

Options:
${LOAD_OPTIONS}
${SAMPLING_OPTIONS}
  -s, --system <text>      a system message for the conversation
      --template-kwargs <json>  extra chat template variables, e.g. '{"enable_thinking":false}'
      --reasoning-parser <name> ${reasoningParserNames().join(', ')}; "none" shows <think> blocks raw
                           (default: qwen3 if the model has a <think> token or its
                           chat template writes one, otherwise none)
      --tool-parser <name> ${toolParserNames().join(', ')}
                           (default with --tools: the format the chat template writes
                           calls in, where it has a marker of its own; otherwise none,
                           and tool calls are printed as text)
      --tools <file.json>  a JSON array of tool definitions to offer the model
                           (a model folder's tools.json is not used unless given here)
      --guided-tools       a call the model starts is guided: the parser's syntax, one of
                           the tools, arguments valid against its schema (docs/guided.md)

Example (weft's demo model):
  weft chat -m ${demo} --tools ${join(demo, 'tools.json')}
`,
  embed: `Usage: weft embed --model <dir> [options] "text" ...

Embeds each text (each argument; or each line of --file, or of stdin) and
writes one JSON line per text to stdout, {"index":0,"embedding":[...]}, in
input order. Pooling, normalisation and prompts come from the model folder
(docs/embeddings.md).

Options:
${LOAD_OPTIONS}
  -f, --file <path>        read the texts from a file, one per line
      --prompt-name <name> one of the model's prompts (e.g. query) before every text
      --dimensions <n>     keep the first n dimensions (normalised again if the model normalises)
      --truncate           cut texts longer than the model's context instead of failing

Example:
  weft embed -m models/Qwen3-Embedding-0.6B --prompt-name query "what is paged attention?"
`,
  rerank: `Usage: weft rerank --model <dir> --query <text> [options] "document" ...

Scores each document (each argument; or each line of --file, or of stdin)
against the query and writes one JSON line per document to stdout, best first,
{"index":0,"score":0.93,"document":"..."}. The model is a reranker: a
Qwen3-Reranker-style folder (docs/reranking.md).

Options:
${LOAD_OPTIONS}
      --query <text>       the text the documents are ranked against (required)
  -f, --file <path>        read the documents from a file, one per line
      --top-n <n>          write only the n best documents
      --instruction <text> the reranker's task instruction (Qwen3-Reranker's <Instruct>)
      --truncate           cut pairs longer than the model's context instead of failing

Example:
  weft rerank -m models/Qwen3-Reranker-0.6B --query "what is paged attention?" -f passages.txt --top-n 3
`,
  demo: `Usage: weft demo [options]

Runs weft's own tiny demo model (${demo}): several questions at once,
reasoning and tool calls streamed as they happen.

Options:
  -m, --model <dir>        another demo model folder (default: ${demo})
      --threads <n>        CPU threads
  -q, --quiet              less output
  -h, --help               this help
`,
  doctor: `Usage: weft doctor [options]

Reports what weft finds on this machine, to paste into an issue: weft, node and
platform versions; the CPU backend's CPU features and kernel set; whether the
OpenVINO addon loaded (and if not, why and what to do); OpenVINO's runtime and
plugin versions; each device OpenVINO lists with its full name, precisions and
cache precisions; and the paged KV cache layout weft would use there, per
kvCache.precision. Works without OpenVINO. Nothing here needs a GPU to run.

Options:
      --json               the same report as one JSON object
  -m, --model <dir>        an OpenVINO IR folder whose cache layout to compile (default: weft's demo IR, in a clone)
  -h, --help               this help
`,
});

export function helpText(topic?: CommandName): string {
  return topic ? commandHelp(demoModelArg())[topic] : GENERAL;
}

/** weft's version, read from the package.json above this file (src/cli/ or dist/). */
export function weftVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const json = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (json.name === 'weft' && typeof json.version === 'string') return json.version;
      } catch {
        // Not ours or unreadable: keep looking upwards.
      }
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
