/**
 * The central guarantee: how the output is cut into deltas changes nothing. For every corpus text
 * (and for random texts made of each format's tags and JSON punctuation), streaming it in any
 * split gives the same content, reasoning, calls, arguments and warnings as parse(text), and the
 * argument deltas of each call concatenate to JSON equal to its final arguments.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collectEvents, createParserChain, createReasoningParser, type ParserChain, type ParserEvent, type ParserStream } from '../../src/parsers/index.js';
import { createToolParser } from '../../src/tool-formats/index.js';
import { toolCorpora } from './cases/index.js';
import { chainCases } from './cases/chain.js';
import { reasoningCases } from './cases/reasoning.js';
import { chars, checkEventContract, runStream, splitAt, TOOLS } from './helpers.js';

interface Subject {
  parse(text: string): { warnings: string[] };
  stream(): ParserStream<ParserEvent>;
}

/** Streams `pieces` and checks the result against parse() of the whole text. */
function expectSameAsParse(subject: Subject, text: string, pieces: readonly string[]): void {
  expect(pieces.join('')).toBe(text);
  const whole = subject.stream();
  const expected = collectEvents(runStream(whole, [text]));
  const stream = subject.stream();
  const events = runStream(stream, pieces);
  checkEventContract(events);
  expect(collectEvents(events)).toStrictEqual(expected);
  expect(stream.warnings).toStrictEqual(whole.warnings);
  const parsed = subject.parse(text) as Partial<ReturnType<typeof collectEvents>> & { warnings: string[] };
  if ('content' in parsed) expect(parsed.content).toBe(expected.content);
  if ('toolCalls' in parsed) expect(parsed.toolCalls).toStrictEqual(expected.toolCalls);
  if ('reasoning' in parsed) expect(parsed.reasoning).toBe(expected.reasoning);
  expect(parsed.warnings).toStrictEqual([...whole.warnings]);
}

/** Whole text, one character at a time, and fast-check's random splits. */
function checkAllSplits(subject: Subject, text: string, runs = 60): void {
  expectSameAsParse(subject, text, [text]);
  expectSameAsParse(subject, text, chars(text));
  fc.assert(
    fc.property(fc.array(fc.nat({ max: text.length }), { maxLength: 24 }), (cuts) => {
      expectSameAsParse(subject, text, splitAt(text, cuts));
    }),
    { numRuns: runs },
  );
}

const FRAGMENTS: Record<string, string[]> = {
  qwen3coder: ['<function=', '<parameter=', 'x', '<tool_call>', '</tool_call>', '<function=get_weather>', '<function=search>', '</function>', '<parameter=city>', '<parameter=limit>', '<parameter=filters>', '</parameter>', '<', '>', '/', '='],
  hermes: ['{', '"name": "x"', '<tool_call>', '</tool_call>', '{"name": "get_weather", "arguments": ', '"name"', '"arguments"', '<tool'],
  llama3_json: ['<|python_tag|>', '{"name": "search", "parameters": ', '{"name": "get_time", "parameters": {}}', '"name"', ';', '<|python', 'text '],
  mistral: ['x', ' ', '\t', '[TOOL_CALLS]', '[ARGS]', '[CALL_ID]', 'get_time', 'get_time{', '</s>', '</', '[{"name": "search", "arguments": ', '[TOOL'],
  pythonic: ['[', ']', '(', ')', 'get_weather(', 'city=', '"', "'", '"""', '<|python_start|>', '<|python_end|>', '=', 'True', 'None'],
  deepseek_v3: ['x', '{}', '<｜tool▁calls▁begin｜>', '<｜tool▁calls▁end｜>', '<｜tool▁call▁begin｜>', '<｜tool▁call▁end｜>', '<｜tool▁sep｜>', 'function', '```json\n', '```', '\n', '<｜tool'],
};
/** More runs for a deeper search: WEFT_FUZZ_RUNS=5000 npx vitest run test/parsers */
const FUZZ_RUNS = Number(process.env.WEFT_FUZZ_RUNS ?? 150);

const COMMON = ['{', '}', '[', ']', '"', ':', ',', ' ', '\n', '\\', 'a', 'é', '🎉', '1', '-2.5', 'true', 'null', '"city"', '"Paris"'];

describe('chunking never changes the result', () => {
  for (const corpus of toolCorpora) {
    describe(corpus.parser, () => {
      const parser = createToolParser(corpus.parser, { tools: TOOLS });
      for (const c of corpus.cases) it(c.title, () => checkAllSplits(parser, c.text));

      it('random texts of its tags and JSON punctuation', () => {
        const alphabet = [...FRAGMENTS[corpus.parser]!, ...COMMON];
        fc.assert(
          fc.property(
            fc.array(fc.constantFrom(...alphabet), { maxLength: 40 }).map((parts) => parts.join('')),
            fc.array(fc.nat({ max: 400 }), { maxLength: 12 }),
            (text, cuts) => {
              expectSameAsParse(parser, text, splitAt(text, cuts));
              expectSameAsParse(parser, text, chars(text));
            },
          ),
          { numRuns: FUZZ_RUNS },
        );
      });
    });
  }

  it('arbitrary text never throws, in any format', () => {
    const parsers = [
      ...toolCorpora.map((c) => createToolParser(c.parser, { tools: TOOLS })),
      createParserChain({ reasoning: createReasoningParser('qwen3'), tool: createToolParser('qwen3coder', { tools: TOOLS }) }),
      createParserChain({ reasoning: createReasoningParser('deepseek_r1'), tool: createToolParser('deepseek_v3') }),
    ];
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 120 }), fc.array(fc.nat({ max: 120 }), { maxLength: 8 }), (text, cutPoints) => {
        for (const parser of parsers) expectSameAsParse(parser, text, splitAt(text, cutPoints));
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  describe('hold-back stays bounded (no delta is re-scanned more than a tag length)', () => {
    const MAX_HELD = 32;
    const expectBounded = (stream: ParserStream<ParserEvent>, text: string) => {
      for (const c of text) {
        stream.push(c);
        expect((stream as unknown as { heldLength: number }).heldLength).toBeLessThanOrEqual(MAX_HELD);
      }
      stream.end();
    };
    for (const corpus of toolCorpora) {
      it(corpus.parser, () => {
        const parser = createToolParser(corpus.parser, { tools: TOOLS });
        const alphabet = [...FRAGMENTS[corpus.parser]!, ...COMMON, '     ', 'abcdefghij'];
        fc.assert(
          fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 60 }), (parts) => expectBounded(parser.stream(), parts.join(''))),
          { numRuns: Math.ceil(FUZZ_RUNS / 3) },
        );
        for (const c of corpus.cases) expectBounded(parser.stream(), c.text + ' '.repeat(100) + c.text);
      });
    }
    it('reasoning', () => {
      for (const name of ['qwen3', 'deepseek_r1']) {
        for (const c of reasoningCases) expectBounded(createReasoningParser(name).stream(), ' '.repeat(100) + c.text + ' '.repeat(100));
      }
    });
  });

  describe('reasoning', () => {
    for (const c of reasoningCases) {
      const parser = createReasoningParser(c.parser, c.startsInReasoning === undefined ? {} : { startsInReasoning: c.startsInReasoning });
      it(`${c.parser}: ${c.title}`, () => checkAllSplits(parser, c.text));
    }
    it('random texts of think tags', () => {
      const alphabet = ['<think>', '</think>', '<tool_call>', '<function=', '<func', '<th', '</', ' ', '\n', 'a', 'é', '>'];
      for (const name of ['qwen3', 'deepseek_r1']) {
        const parser = createReasoningParser(name);
        fc.assert(
          fc.property(
            fc.array(fc.constantFrom(...alphabet), { maxLength: 30 }).map((parts) => parts.join('')),
            fc.array(fc.nat({ max: 200 }), { maxLength: 10 }),
            (text, cuts) => expectSameAsParse(parser, text, splitAt(text, cuts)),
          ),
          { numRuns: FUZZ_RUNS },
        );
      }
    });
  });

  describe('reasoning and tools chained', () => {
    for (const c of chainCases) {
      const parser: ParserChain = createParserChain({
        reasoning: createReasoningParser(c.reasoningParser, c.startsInReasoning === undefined ? {} : { startsInReasoning: c.startsInReasoning }),
        tool: createToolParser(c.toolParser, { tools: TOOLS }),
      });
      it(c.title, () => checkAllSplits(parser, c.text));
    }
  });
});
