/**
 * The flags the docs list, the flags the help lists and the flags the parsers take are the same
 * set, per command: docs/cli.md's option tables against `weft generate|chat --help` and
 * src/cli/args.ts, docs/serve.md's table against `weft serve --help` and src/serve/command-line.ts.
 * A flag added to one of them and not the others fails here, naming it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_OPTIONS } from '../../src/cli/args.js';
import { helpText } from '../../src/cli/help.js';
import { SERVE_OPTIONS } from '../../src/serve/command-line.js';

const docs = (file: string): string => readFileSync(join(import.meta.dirname, '../../docs', file), 'utf8');

/** The text of one `## ` section of a markdown file. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start, `section "## ${heading}"`).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** `--long` names in the first cell of a table's rows (`| \`-m, --model <dir>\` | ...`). */
function tableFlags(text: string): Set<string> {
  const flags = new Set<string>();
  for (const line of text.split('\n')) {
    const cell = /^\|([^|]*)\|/.exec(line)?.[1];
    if (cell === undefined || !cell.includes('`-')) continue;
    for (const match of cell.matchAll(/--([a-z][a-z0-9-]*)/g)) flags.add(match[1]!);
  }
  return flags;
}

/** `--long` names at the start of the help's option lines (`  -m, --model <dir>   ...`). */
function helpFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const match of help.matchAll(/^ {2,6}(?:-[a-z], )?--([a-z][a-z0-9-]*)/gm)) flags.add(match[1]!);
  return flags;
}

const sorted = (set: Iterable<string>): string[] => [...set].sort();

describe('docs/cli.md, the help and the parser list the same flags', () => {
  const cli = docs('cli.md');

  it('generate', () => {
    const parsed = Object.keys(COMMAND_OPTIONS.generate);
    expect(sorted(helpFlags(helpText('generate')))).toEqual(sorted(parsed));
    expect(sorted(tableFlags(section(cli, '`weft generate`')))).toEqual(sorted(parsed));
  });

  it('chat: the same as generate (but --echo) plus those its section names', () => {
    const parsed = Object.keys(COMMAND_OPTIONS.chat);
    expect(sorted(helpFlags(helpText('chat')))).toEqual(sorted(parsed));
    const chat = section(cli, '`weft chat`');
    const named = new Set([...tableFlags(chat), ...[...chat.matchAll(/`(?:-[a-z], )?--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!)]);
    const documented = new Set([...tableFlags(section(cli, '`weft generate`')), ...named]);
    documented.delete('echo'); // "the same options as generate (except --echo)"
    expect(chat).toContain('except `--echo`');
    expect(sorted(documented)).toEqual(sorted(parsed));
  });

  it('embed', () => {
    const parsed = Object.keys(COMMAND_OPTIONS.embed);
    expect(sorted(helpFlags(helpText('embed')))).toEqual(sorted(parsed));
    expect(sorted(tableFlags(section(cli, '`weft embed`')))).toEqual(sorted(parsed));
  });

  it('rerank', () => {
    const parsed = Object.keys(COMMAND_OPTIONS.rerank);
    expect(sorted(helpFlags(helpText('rerank')))).toEqual(sorted(parsed));
    expect(sorted(tableFlags(section(cli, '`weft rerank`')))).toEqual(sorted(parsed));
  });

  it('demo', () => {
    const parsed = Object.keys(COMMAND_OPTIONS.demo);
    expect(sorted(helpFlags(helpText('demo')))).toEqual(sorted(parsed));
    const demo = section(cli, '`weft demo`');
    // Its section lists them in prose: `-m, --model <dir>`, `--threads`, `-q` (and -h, as every command).
    const named = new Set([...demo.matchAll(/`(?:-[a-z], )?--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!));
    expect(sorted([...named, 'quiet', 'help'])).toEqual(sorted(parsed));
  });
});

describe('docs/cli.md, the help and the parser list the same doctor flags', () => {
  it('doctor', () => {
    const parsed = Object.keys(COMMAND_OPTIONS.doctor);
    expect(sorted(helpFlags(helpText('doctor')))).toEqual(sorted(parsed));
    expect(sorted(tableFlags(section(docs('cli.md'), '`weft doctor`')))).toEqual(sorted(parsed));
  });
});

describe('docs/serve.md, the help and the parser list the same flags', () => {
  it('serve', () => {
    const parsed = Object.keys(SERVE_OPTIONS);
    expect(sorted(helpFlags(helpText('serve')))).toEqual(sorted(parsed));
    // The table's first column: weft's names (the OVMS column holds their aliases).
    expect(sorted(tableFlags(section(docs('serve.md'), 'Options')))).toEqual(sorted(parsed));
  });
});
