/**
 * Routes the events of one `{"name": ..., "arguments": {...}}` object (hermes, llama3_json, mistral
 * before v11): the name starts the call as soon as its string closes, the arguments object streams
 * into the call's writer, other keys are ignored. "parameters" is accepted for "arguments", and
 * arguments given as a JSON-encoded string are decoded (then sent whole, once complete).
 */
import type { CallBuilder } from '../call-builder.js';
import type { JsonSink } from './sink.js';

type Route = 'none' | 'name' | 'args' | 'argsString' | 'skip';

export class CallObjectSink implements JsonSink {
  /** Containers open around the current event; 1 = directly inside the call object. */
  private depth = 0;
  private currentKey: string | null = null;
  private route: Route = 'none';
  private text = '';
  private sawArgs = false;
  private name: string | null = null;
  /** The top-level value is not an object. */
  notObject = false;

  /**
   * `requireArguments`: the call starts only once it also has an "arguments"/"parameters" key (for
   * formats where a bare JSON answer such as `{"name": "Alice"}` must not be mistaken for a call).
   */
  /**
   * `deferStart`: never start the call here; the owner starts it once the whole object turned out
   * valid (see `isCall`), so that an object which breaks later can still be given back as text.
   */
  constructor(
    private readonly call: CallBuilder,
    private readonly warn: (message: string) => void,
    private readonly requireArguments = false,
    private readonly deferStart = false,
  ) {}

  /** Why the object is not a call, when it is not one. */
  get missing(): string {
    return this.name === null ? 'it has no "name"' : 'it has no "arguments"';
  }

  /** The object read so far has what a call needs (a name, and arguments where required). */
  get isCall(): boolean {
    return this.name !== null && (this.sawArgs || !this.requireArguments);
  }

  /** The call's name, once its string has closed. */
  get callName(): string | null {
    return this.name;
  }

  private tryStart(): void {
    if (!this.deferStart && this.isCall) this.call.start(this.name!);
  }

  open(kind: '{' | '['): void {
    if (this.depth === 0) {
      this.notObject = kind !== '{';
    } else if (this.depth === 1) {
      this.route = this.routeFor(kind === '{' ? 'object' : 'other');
      if (this.route === 'args') this.call.writer.open(kind);
    } else if (this.route === 'args') {
      this.call.writer.open(kind);
    }
    this.depth++;
  }

  close(): void {
    this.depth--;
    if (this.depth >= 1 && this.route === 'args') this.call.writer.close();
    if (this.depth === 1) this.route = 'none';
  }

  key(jsonString: string): void {
    if (this.depth === 1) this.currentKey = JSON.parse(jsonString) as string;
    else if (this.route === 'args') this.call.writer.key(jsonString);
  }

  stringStart(): void {
    if (this.depth === 0) {
      this.notObject = true;
    } else if (this.depth === 1) {
      this.route = this.routeFor('string');
      this.text = '';
    } else if (this.route === 'args') {
      this.call.writer.stringStart();
    }
  }

  stringChunk(escaped: string): void {
    if (this.depth === 1) {
      if (this.route === 'name' || this.route === 'argsString') this.text += escaped;
    } else if (this.route === 'args') {
      this.call.writer.stringChunk(escaped);
    }
  }

  stringEnd(): void {
    if (this.depth > 1) {
      if (this.route === 'args') this.call.writer.stringEnd();
      return;
    }
    if (this.depth === 0) return;
    const value = JSON.parse(`"${this.text}"`) as string;
    this.text = '';
    if (this.route === 'name') {
      this.name = value;
      this.tryStart();
    }
    else if (this.route === 'argsString') this.decodeArgumentString(value);
    this.route = 'none';
  }

  value(json: string): void {
    if (this.depth === 0) {
      this.notObject = true;
    } else if (this.depth === 1) {
      const route = this.routeFor(json === 'null' ? 'null' : 'other');
      if (route === 'args') this.call.writer.value('{}');
      this.route = 'none';
    } else if (this.route === 'args') {
      this.call.writer.value(json);
    }
  }

  private routeFor(kind: 'object' | 'string' | 'null' | 'other'): Route {
    const key = this.currentKey;
    if (key === 'name') {
      if (kind === 'string' && this.name === null) return 'name';
      if (kind !== 'string') this.warn('a tool call "name" is not a string');
      return 'skip';
    }
    if (key === 'arguments' || key === 'parameters') {
      if (this.sawArgs) {
        this.warn(`a tool call has "${key}" twice; the first one is kept`);
        return 'skip';
      }
      this.sawArgs = true;
      this.tryStart();
      if (kind === 'object' || kind === 'null') return 'args';
      if (kind === 'string') return 'argsString';
      this.warn(`tool call arguments are not an object; using {}`);
      return 'skip';
    }
    return 'skip';
  }

  private decodeArgumentString(value: string): void {
    let decoded: unknown;
    try {
      decoded = JSON.parse(value);
    } catch {
      decoded = undefined;
    }
    if (typeof decoded === 'object' && decoded !== null && !Array.isArray(decoded)) {
      this.call.writer.value(JSON.stringify(decoded));
    } else {
      this.warn('tool call arguments are a string that is not a JSON object; using {}');
    }
  }
}
