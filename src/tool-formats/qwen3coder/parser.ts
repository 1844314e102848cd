/**
 * qwen3coder: `<tool_call><function=NAME><parameter=KEY>VALUE</parameter>...</function></tool_call>`.
 * Values are raw text (one leading and one trailing newline removed) typed by the tool's JSON
 * schema. String parameters stream character by character; other values are sent when complete.
 * Missing closing tags end what they should have ended: a parameter without `</parameter>` ends at
 * the next `<parameter=`, at `</function>`, at `</tool_call>` or at the end of the output, and is
 * kept in every case. A parameter given twice keeps its first value (already streamed); the repeat
 * is dropped with a warning. A `</tool_call>` right after a `<function=...>` that had no
 * `<tool_call>` closes it too (it is not content).
 */
import type { JsonSchema } from '../../text/types.js';
import { CallBuilder } from '../../parsers/call-builder.js';
import { preview } from '../../parsers/preview.js';
import { scanToMarker, skipWhitespace, startsWithWord } from '../../parsers/markers.js';
import { StrayText } from '../../parsers/stray-text.js';
import { StateMachineToolStream, type StateStep } from '../../parsers/tool-stream-base.js';
import { FUNCTION, FUNCTION_END, NAME_END, PARAMETER, PARAMETER_END, TOOL_CALL, TOOL_CALL_END } from './markers.js';
import { convertParameter, streamsAsString } from './schema-values.js';

type State = 'content' | 'preFunction' | 'malformed' | 'functionName' | 'params' | 'paramName' | 'value' | 'afterFunction';

/** JSON string text for `text` (no quotes). Most value text needs no escaping; it is returned as is. */
function escapeJsonText(text: string): string {
  for (let k = 0; k < text.length; k++) {
    const code = text.charCodeAt(k);
    if (code < 0x20 || code === 0x22 || code === 0x5c) return JSON.stringify(text).slice(1, -1);
  }
  return text;
}

export class Qwen3CoderToolStream extends StateMachineToolStream<State> {
  protected state: State = 'content';
  private inToolCall = false;
  private raw = '';
  private name = '';
  private call: CallBuilder | null = null;
  private callSchema: JsonSchema | undefined;
  private paramName = '';
  private paramSchema: JsonSchema | undefined;
  private streaming = false;
  private valueText = '';
  private valueStart = true;
  private heldNewline = false;
  /** Parameters of the current call so far; a repeated one is skipped. */
  private readonly seenParams = new Set<string>();
  private skipping = false;
  private readonly stray = new StrayText();

  protected readonly steps: Readonly<Record<State, StateStep>> = {
    content: (s, i, final) => this.inContent(s, i, final),
    preFunction: (s, i, final) => this.beforeFunction(s, i, final),
    malformed: (s, i, final) => this.inMalformed(s, i, final),
    functionName: (s, i, final) => this.inFunctionName(s, i, final),
    params: (s, i, final) => this.betweenParams(s, i, final),
    paramName: (s, i, final) => this.inParamName(s, i, final),
    value: (s, i, final) => this.inValue(s, i, final),
    afterFunction: (s, i, final) => this.afterFunction(s, i, final),
  };

  /** Text, up to `<tool_call>` or a bare `<function=`. */
  private inContent(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [TOOL_CALL, FUNCTION], final);
    this.content(scan.text);
    if (scan.marker === null) return this.wait(scan.next);
    this.inToolCall = scan.marker === TOOL_CALL;
    this.raw = scan.marker;
    this.name = '';
    this.state = this.inToolCall ? 'preFunction' : 'functionName';
    return scan.next;
  }

  /** After `<tool_call>`: whitespace, then `<function=` (anything else is not a call). */
  private beforeFunction(s: string, i: number, final: boolean): number {
    const j = skipWhitespace(s, i);
    this.raw += s.slice(i, j);
    if (j >= s.length && !final) return this.wait(j);
    const fn = startsWithWord(s, j, FUNCTION);
    if (fn === 'maybe' && !final) return this.wait(j);
    if (fn !== 'yes') {
      this.state = 'malformed';
      return j;
    }
    this.raw += FUNCTION;
    this.state = 'functionName';
    return j + FUNCTION.length;
  }

  /** Not a call after all: everything up to `</tool_call>` goes back to the content. */
  private inMalformed(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [TOOL_CALL_END], final);
    this.raw += scan.text + (scan.marker ?? '');
    if (scan.marker === null && !final) return this.wait(scan.next);
    this.warn(`kept a malformed tool call as text: ${preview(this.raw)}`);
    this.content(this.raw);
    this.raw = '';
    this.state = 'content';
    return scan.next;
  }

  /** The function's name, up to `>`. A newline or `<` cannot be in a name: decided there, wherever the chunks end. */
  private inFunctionName(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [NAME_END], final);
    const badAt = scan.text.search(/[\n<]/);
    if (badAt !== -1 || (scan.marker === null && final) || (scan.marker !== null && (this.name + scan.text).trim() === '')) {
      const end = badAt !== -1 ? badAt : scan.text.length;
      this.raw += scan.text.slice(0, end);
      if (this.inToolCall) {
        this.state = 'malformed';
      } else {
        this.warn(`kept a malformed tool call as text: ${preview(this.raw)}`);
        this.content(this.raw);
        this.state = 'content';
      }
      return i + end;
    }
    this.name += scan.text;
    this.raw += scan.text + (scan.marker ?? '');
    if (scan.marker === null) return this.wait(scan.next);
    this.startFunction(this.name.trim());
    return scan.next;
  }

  /** Inside a function, between parameters: the next `<parameter=`, or the function's end. */
  private betweenParams(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [PARAMETER, FUNCTION_END, TOOL_CALL_END], final);
    this.stray.add(scan.text);
    if (scan.marker !== null || final) this.warnStray();
    if (scan.marker === PARAMETER) {
      this.paramName = '';
      this.state = 'paramName';
    } else if (scan.marker === FUNCTION_END) {
      this.endFunction(null);
    } else if (scan.marker === TOOL_CALL_END) {
      this.endFunction(`missing ${FUNCTION_END}`);
      this.state = 'content';
    } else {
      if (final) this.endFunction(`missing ${FUNCTION_END}`);
      return this.wait(scan.next);
    }
    return scan.next;
  }

  /** A parameter's name, up to `>`. */
  private inParamName(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [NAME_END], final);
    this.paramName += scan.text;
    if (scan.marker !== null) {
      this.startValue(this.paramName.trim());
      return scan.next;
    }
    if (final) {
      this.warn(`tool call "${this.name}": parameter name ${preview(this.paramName)} was cut off; dropped`);
      this.endFunction(null);
    }
    return this.wait(scan.next);
  }

  /** A parameter's value, up to `</parameter>` (or any tag that ends what it should have ended). */
  private inValue(s: string, i: number, final: boolean): number {
    const scan = scanToMarker(s, i, [PARAMETER_END, PARAMETER, FUNCTION_END, TOOL_CALL_END], final);
    this.valuePiece(scan.text);
    if (scan.marker === PARAMETER_END) {
      this.endValue(null);
      return scan.next;
    }
    this.endValueUnclosed(scan.marker, final);
    return scan.marker === null ? this.wait(scan.next) : scan.next;
  }

  /** A value that ended without `</parameter>`: at `marker`, or (null) at the end of the input when `final`. */
  private endValueUnclosed(marker: string | null, final: boolean): void {
    if (marker === null && !final) return;
    this.endValue(`missing ${PARAMETER_END}`);
    if (marker === PARAMETER) {
      this.paramName = '';
      this.state = 'paramName';
    } else if (marker === FUNCTION_END) {
      this.endFunction(null);
    } else {
      this.endFunction(`missing ${FUNCTION_END}`);
      if (marker === TOOL_CALL_END) this.state = 'content';
    }
  }

  /** After `</function>`: another `<function=` or `</tool_call>` inside a tool call; a bare function may still be closed by one. */
  private afterFunction(s: string, i: number, final: boolean): number {
    if (!this.inToolCall) {
      // Whitespace before the `</tool_call>` is a gap.
      const j = skipWhitespace(s, i);
      this.content(s.slice(i, j));
      if (j >= s.length && !final) return this.wait(j);
      const close = startsWithWord(s, j, TOOL_CALL_END);
      if (close === 'maybe' && !final) return this.wait(j);
      this.state = 'content';
      return close === 'yes' ? j + TOOL_CALL_END.length : j;
    }
    const scan = scanToMarker(s, i, [TOOL_CALL_END, FUNCTION], final);
    this.stray.add(scan.text);
    if (scan.marker !== null || final) this.warnStray();
    if (scan.marker === null) {
      if (final) this.warn(`missing ${TOOL_CALL_END}`);
      return this.wait(scan.next);
    }
    if (scan.marker === FUNCTION) {
      this.raw = FUNCTION;
      this.name = '';
      this.state = 'functionName';
    } else {
      this.state = 'content';
    }
    return scan.next;
  }

  private startFunction(name: string): void {
    this.name = name;
    this.raw = '';
    this.call = new CallBuilder(this);
    this.call.start(name);
    this.call.writer.open('{');
    this.call.flush();
    this.callSchema = this.schemaOf(name);
    this.seenParams.clear();
    this.state = 'params';
  }

  private endFunction(why: string | null): void {
    if (why) this.warn(`tool call "${this.name}": ${why}`);
    this.call!.writer.close();
    this.call!.end();
    this.call = null;
    this.state = 'afterFunction';
  }

  private startValue(key: string): void {
    this.paramName = key;
    this.valueText = '';
    this.valueStart = true;
    this.heldNewline = false;
    this.state = 'value';
    this.skipping = this.seenParams.has(key);
    if (this.skipping) return;
    this.seenParams.add(key);
    const properties = this.callSchema?.properties;
    this.paramSchema = properties && Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (properties && !this.paramSchema) this.warn(`tool call "${this.name}": unknown parameter "${key}"`);
    this.streaming = streamsAsString(this.paramSchema);
    if (this.streaming) {
      this.call!.writer.key(JSON.stringify(key));
      this.call!.writer.stringStart();
      this.call!.flush();
    }
  }

  /** Value text: drops the first newline, holds a trailing one (it is dropped if the value ends there). */
  private valuePiece(text: string): void {
    if (text.length === 0 || this.skipping) return;
    if (this.valueStart) {
      this.valueStart = false;
      if (text[0] === '\n') text = text.slice(1);
    }
    if (this.heldNewline) text = '\n' + text;
    this.heldNewline = text.endsWith('\n');
    if (this.heldNewline) text = text.slice(0, -1);
    if (text.length === 0) return;
    if (this.streaming) {
      this.call!.writer.stringChunk(escapeJsonText(text));
      this.call!.flush();
    } else {
      this.valueText += text;
    }
  }

  private endValue(why: string | null): void {
    if (why) this.warn(`tool call "${this.name}", parameter "${this.paramName}": ${why}`);
    if (this.skipping) {
      this.warn(`tool call "${this.name}": parameter "${this.paramName}" was given again; the first value is kept`);
      this.skipping = false;
      this.state = 'params';
      return;
    }
    const writer = this.call!.writer;
    if (this.streaming) {
      writer.stringEnd();
    } else {
      const converted = convertParameter(this.valueText, this.paramSchema);
      if (converted.warning) this.warn(`tool call "${this.name}", parameter "${this.paramName}": ${converted.warning}`);
      writer.key(JSON.stringify(this.paramName));
      writer.value(JSON.stringify(converted.value) ?? 'null');
    }
    this.call!.flush();
    this.state = 'params';
  }

  /** Text between tags where only whitespace belongs. */
  private warnStray(): void {
    const text = this.stray.take();
    if (text !== null) this.warn(`tool call "${this.name}": ignored unexpected text ${preview(text)}`);
  }
}
