/**
 * pythonic: the output is a Python list of calls, `[f(a=1, b="x"), g()]`, optionally wrapped in
 * `<|python_start|>` ... `<|python_end|>`. Only output that starts that way is calls; anything else is
 * content. Keyword arguments are read with our own Python-literal parser (never eval) and each one is
 * sent as soon as it is complete: `{"a":1` then `,"b":"x"` then `}`. The splitting into arguments
 * tracks brackets and quotes so commas and parentheses inside strings and lists are not boundaries.
 */
import { CallBuilder } from '../../parsers/call-builder.js';
import { preview } from '../../parsers/preview.js';
import { scanToMarker, skipWhitespace, startsWithWord } from '../../parsers/markers.js';
import { parsePythonLiteral } from '../../parsers/python-literal.js';
import { ToolStreamBase } from '../../parsers/tool-stream-base.js';
import { FUNCTION_NAME, PY_END, PY_START } from './markers.js';


const KWARG_RE = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=([\s\S]*)$/;

type State = 'start' | 'content' | 'expectList' | 'callName' | 'args' | 'afterCall' | 'afterList';

export class PythonicToolStream extends ToolStreamBase {
  private state: State = 'start';
  private raw = '';
  private name = '';
  private call: CallBuilder | null = null;
  private argText = '';
  private depth = 0;
  private quote = '';
  private escaped = false;
  /** A call of this list has started: a later syntax error is then a warning, not just content. */
  private callsSeen = false;

  protected process(s: string, final: boolean): number {
    let i = 0;
    for (;;) {
      switch (this.state) {
        case 'start': {
          const j = skipWhitespace(s, i);
          this.content(s.slice(i, j));
          i = j;
          if (i >= s.length) return i;
          const tag = startsWithWord(s, i, PY_START);
          if (tag === 'maybe' && !final) return i;
          this.raw = '';
          if (tag === 'yes') {
            this.raw = PY_START;
            i += PY_START.length;
            this.state = 'expectList';
          } else {
            this.state = s[i] === '[' ? 'expectList' : 'content';
          }
          break;
        }
        case 'content': {
          this.content(s.slice(i));
          return s.length;
        }
        case 'expectList': {
          const j = skipWhitespace(s, i);
          this.raw += s.slice(i, j);
          i = j;
          if (i >= s.length && !final) return i;
          if (s[i] !== '[') {
            this.notCalls(null);
            break;
          }
          this.raw += '[';
          i++;
          this.name = '';
          this.state = 'callName';
          break;
        }
        case 'callName': {
          let j = i;
          while (j < s.length && /[\sA-Za-z0-9_.]/.test(s[j]!)) j++;
          this.name += s.slice(i, j);
          this.raw += s.slice(i, j);
          i = j;
          if (i >= s.length && !final) return i;
          const name = this.name.trim();
          if (s[i] === '(' && FUNCTION_NAME.test(name)) {
            i++;
            this.beginCall(name);
          } else {
            this.notCalls(`expected a function call at ${preview(this.name + (s[i] ?? ''))}`);
          }
          break;
        }
        case 'args': {
          i = this.scanArgs(s, i);
          if (i >= s.length) {
            if (!final) return i;
            this.warn(`tool call "${this.name}": missing ")"`);
            this.finishArgument(true);
            this.closeCall();
            return i;
          }
          break;
        }
        case 'afterCall': {
          i = skipWhitespace(s, i);
          if (i >= s.length) {
            if (final) this.warn('the list of calls is missing "]"');
            return i;
          }
          if (s[i] === ',') {
            i++;
            this.name = '';
            this.raw = '';
            this.state = 'callName';
          } else if (s[i] === ']') {
            i++;
            this.state = 'afterList';
          } else {
            this.warn(`unexpected ${JSON.stringify(s[i])} after a call; the rest is content`);
            this.state = 'content';
          }
          break;
        }
        case 'afterList': {
          const j = skipWhitespace(s, i);
          this.content(s.slice(i, j));
          i = j;
          if (i >= s.length) return i;
          const tag = startsWithWord(s, i, PY_END);
          if (tag === 'maybe' && !final) return i;
          if (tag === 'yes') i += PY_END.length;
          this.state = 'content';
          break;
        }
      }
    }
  }

  /** The list turned out not to be calls: what was held goes back to the content. */
  private notCalls(why: string | null): void {
    if (this.callsSeen && why) this.warn(why);
    this.content(this.raw);
    this.raw = '';
    this.state = 'content';
  }

  private beginCall(name: string): void {
    this.name = name;
    this.raw = '';
    this.callsSeen = true;
    this.call = new CallBuilder(this);
    this.call.start(name);
    this.call.writer.open('{');
    this.call.flush();
    this.argText = '';
    this.depth = 0;
    this.quote = '';
    this.escaped = false;
    this.state = 'args';
  }

  /** Collects argument text up to a top-level "," or ")"; returns the index reached. */
  private scanArgs(s: string, from: number): number {
    let i = from;
    let pieceStart = from;
    while (i < s.length) {
      const c = s[i]!;
      if (this.quote) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === this.quote) this.quote = '';
      } else if (c === '"' || c === "'") {
        this.quote = c;
      } else if (c === '(' || c === '[' || c === '{') {
        this.depth++;
      } else if ((c === ')' || c === ']' || c === '}') && this.depth > 0) {
        this.depth--;
      } else if (this.depth === 0 && (c === ',' || c === ')')) {
        this.argText += s.slice(pieceStart, i);
        this.finishArgument();
        if (c === ')') {
          this.closeCall();
          return i + 1;
        }
        pieceStart = i + 1;
      }
      i++;
    }
    this.argText += s.slice(pieceStart, i);
    return i;
  }

  /** Adds the collected `name=value` to the arguments; `cutOff`: the output ended inside it. */
  private finishArgument(cutOff = false): void {
    const text = this.argText;
    this.argText = '';
    if (text.trim() === '') return;
    const kwarg = KWARG_RE.exec(text);
    if (!kwarg) {
      this.warn(`tool call "${this.name}": dropped a positional argument ${preview(text.trim())}`);
      return;
    }
    const [, key, valueText] = kwarg;
    const parsed = parsePythonLiteral(valueText!);
    let value: unknown;
    if (parsed.ok) {
      value = parsed.value;
    } else if (cutOff) {
      this.warn(`tool call "${this.name}", argument "${key}": cut off (${parsed.error}); dropped`);
      return;
    } else {
      this.warn(`tool call "${this.name}", argument "${key}": ${parsed.error}; kept as text`);
      value = valueText!.trim();
    }
    const writer = this.call!.writer;
    writer.key(JSON.stringify(key));
    writer.value(JSON.stringify(value));
    this.call!.flush();
  }

  private closeCall(): void {
    this.call!.writer.close();
    this.call!.end();
    this.call = null;
    this.state = 'afterCall';
  }
}
