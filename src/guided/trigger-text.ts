/**
 * Free text that watches for markers: each marker, once written, either
 * starts what follows it (a tool call, a reasoning block, the content after
 * it) or is refused. Everything else is free, so this is the frame a
 * tool-guided "auto" reply spends most of its time in (call-modes.ts builds
 * it from the tool format's triggers).
 *
 * Invariants:
 * - Only a marker's last byte can complete it, so a token without any of
 *   `guardBytes` is accepted from every state and leaves a frame of this text
 *   on top: masks are free runs of the tokens without one (free-runs.ts),
 *   and the engine samples first and checks (grammar.ts: isFreeText).
 * - No marker contains another (the parsers' rule, markers.ts), so the first
 *   marker completed is the one the parser reads, however the text is split.
 * - States are (start, suffix): `start` is the text since this text began when
 *   it is whitespace and then a proper prefix of a start-only marker (null once
 *   it is not), `suffix` the longest tail that is a proper prefix of a marker
 *   written anywhere (Aho-Corasick). Both are kept as byte strings (one char
 *   per byte), so markers may be any UTF-8.
 */
import { Frame, type Step } from './automaton.js';
import { freeTextRun, type FreeRun } from './free-runs.js';
import { newId, type Part } from './text-frames.js';

export interface Marker {
  readonly text: string;
  /** 'start': a marker only when nothing but whitespace came before it in this text (pythonic's `[`, `<think>`). */
  readonly at: 'anywhere' | 'start';
  /** What replaces this text once the marker is written (a Push of a call and the text to come back to), or null: it may not be written. */
  readonly then: (() => Step) | null;
}

const byteString = (text: string): string => String.fromCharCode(...new TextEncoder().encode(text));
const isWhitespace = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x09 || b === 0x0d;

export class TriggerText implements Part {
  readonly id = newId();
  /** Bytes that end a marker; any other byte keeps a frame of this text on top (see the invariants). */
  readonly guardBytes = new Uint8Array(256);
  /** Masks: every token without a guard byte, then a walk of the others (free-runs.ts). */
  readonly freeRun: FreeRun;
  private readonly anywhere: { readonly bytes: string; readonly marker: Marker }[];
  private readonly atStart: { readonly bytes: string; readonly marker: Marker }[];
  private readonly frames = new Map<string, TriggerFrame>();

  /** `mayEnd`: whether the reply may end in this text (end tokens allowed). */
  constructor(
    markers: readonly Marker[],
    readonly mayEnd: boolean,
  ) {
    const all = markers.map((marker) => ({ bytes: byteString(marker.text), marker }));
    for (const a of all) {
      if (a.bytes.length === 0) throw new Error('a marker cannot be empty');
      this.guardBytes[a.bytes.charCodeAt(a.bytes.length - 1)] = 1;
      for (const b of all) if (a !== b && b.bytes.includes(a.bytes)) throw new Error(`marker ${a.marker.text} is inside ${b.marker.text}`);
    }
    this.freeRun = freeTextRun(this.guardBytes);
    this.anywhere = all.filter((m) => m.marker.at === 'anywhere');
    this.atStart = all.filter((m) => m.marker.at === 'start');
  }

  /** The text's beginning (start-only markers count here). */
  start(): Frame {
    return this.frame(this.atStart.length > 0 ? '' : null, '');
  }

  /** The text again after something it started (a call) ended: start-only markers no longer count. */
  resume(): Frame {
    return this.frame(null, '');
  }

  frame(start: string | null, suffix: string): TriggerFrame {
    const key = `${start ?? '\u0001'}\u0000${suffix}`;
    let frame = this.frames.get(key);
    if (frame === undefined) {
      frame = new TriggerFrame(this, start, suffix);
      this.frames.set(key, frame);
    }
    return frame;
  }

  /** The step after `byte` from (start, suffix). */
  next(start: string | null, suffix: string, byte: number): Step {
    const ch = String.fromCharCode(byte);
    let nextStart: string | null = null;
    if (start !== null) {
      if (start === '' && isWhitespace(byte)) nextStart = '';
      else {
        const text = start + ch;
        // A start-only marker began before any marker in progress here: it wins.
        const done = this.atStart.find((m) => m.bytes === text);
        if (done !== undefined) return fire(done.marker);
        if (this.atStart.some((m) => m.bytes.startsWith(text))) nextStart = text;
      }
    }
    const text = suffix + ch;
    const done = this.anywhere.find((m) => text.endsWith(m.bytes));
    if (done !== undefined) return fire(done.marker);
    let nextSuffix = '';
    for (let k = 0; k < text.length; k++) {
      const tail = text.slice(k);
      if (this.anywhere.some((m) => m.bytes.startsWith(tail))) {
        nextSuffix = tail;
        break;
      }
    }
    return this.frame(nextStart, nextSuffix);
  }
}

function fire(marker: Marker): Step {
  return marker.then === null ? null : marker.then();
}

export class TriggerFrame extends Frame {
  readonly key: string;
  private readonly transitions = new Map<number, Step>();
  constructor(
    readonly text: TriggerText,
    readonly start: string | null,
    readonly suffix: string,
  ) {
    super();
    this.key = `T${text.id}.${start === null ? '-' : JSON.stringify(start)}.${JSON.stringify(suffix)}`;
  }
  override get canPop(): boolean {
    return this.text.mayEnd;
  }
  override get guardBytes(): Uint8Array {
    return this.text.guardBytes;
  }
  override freeRun(): FreeRun {
    return this.text.freeRun;
  }
  step(byte: number): Step {
    let next = this.transitions.get(byte);
    if (next === undefined && !this.transitions.has(byte)) {
      next = this.text.next(this.start, this.suffix, byte);
      this.transitions.set(byte, next);
    }
    return next!;
  }
}
