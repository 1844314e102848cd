/**
 * One tool-call format: the streaming parser that reads its calls, the
 * grammar that writes them (guided generation), and how a chat template that
 * uses it shows (parser inference). Each format is a folder next to this
 * file (markers.ts, parser.ts, grammar.ts, index.ts) and one row of
 * registry.ts.
 */
import type { ToolGrammar } from '../guided/tool-grammar.js';
import type { ToolParserOptions, ToolStream } from '../parsers/types.js';

export interface ToolFormat {
  /** The tool parser's name (`parsers.tool`, `--tool-parser`). */
  readonly name: string;
  /** A new stream for one request. */
  readonly stream: (options: ToolParserOptions) => ToolStream;
  /** Guided generation in this syntax. */
  readonly grammar: ToolGrammar;
  /**
   * Whether a chat template writes calls in this format: `rendered` is the template's rendering
   * of one assistant message holding a call to the tool `probe` (infer.ts).
   */
  readonly writtenBy: (rendered: string, probe: string) => boolean;
}
