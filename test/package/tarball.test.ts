/**
 * The package as a user gets it: `npm pack` (prepack builds dist/ and the prebuilt
 * native binary), then `npm install <tarball>` into an empty project whose PATH has
 * no cmake and no C/C++ compiler, then a generation with the bundled demo model.
 *
 * Slow (tsup, an incremental native build, an npm install from the registry:
 * 20-60 s), so it is one file. Packing rebuilds the repository's dist/ and
 * prebuilds/ in place, so no other test reads dist/ (the bundles are checked here,
 * as installed). Skipped, with a message, off linux-x64 (the only prebuilt so far)
 * or with WEFT_SKIP_PACKAGE_TEST=1; CI runs it.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeSourceHash } from '../../src/package-files.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const skipReason =
  process.env.WEFT_SKIP_PACKAGE_TEST === '1'
    ? 'WEFT_SKIP_PACKAGE_TEST=1'
    : `${process.platform}-${process.arch}` !== 'linux-x64'
      ? `no prebuilt binary is made for ${process.platform}-${process.arch} yet`
      : undefined;
if (skipReason) console.warn(`test/package: the packed-tarball install test is skipped (${skipReason})`);

const work = mkdtempSync(join(tmpdir(), 'weft-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A PATH holding node, npm, npx and a shell only: no cmake, no cc/c++/g++. */
function bareBin(): string {
  const bin = join(work, 'bare-bin');
  mkdirSync(bin);
  const which = (tool: string) => execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
  symlinkSync(process.execPath, join(bin, 'node'));
  for (const tool of ['npm', 'npx', 'sh']) symlinkSync(which(tool), join(bin, tool));
  return bin;
}

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): SpawnSyncReturns<string> =>
  spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 240_000 });
const output = (result: SpawnSyncReturns<string>) => `exit ${String(result.status)}\n${result.stdout}\n${result.stderr}`;

describe.skipIf(skipReason !== undefined)('the packed tarball', () => {
  let tarball = '';
  let files: string[] = [];
  let packedManifest: { scripts: Record<string, string> } = { scripts: {} };
  let project = '';
  let env: NodeJS.ProcessEnv = {};
  let installed: SpawnSyncReturns<string>;

  beforeAll(() => {
    const t0 = performance.now();
    const pack = run('npm', ['pack', '--json', '--pack-destination', work], repoRoot, process.env);
    expect(pack.status, output(pack)).toBe(0);
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.search(/^\[\s*$/m))) as { filename: string; files: { path: string }[] }[];
    tarball = join(work, info!.filename);
    files = info!.files.map((f) => f.path);
    packedManifest = JSON.parse(execFileSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }));

    project = join(work, 'app');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }));
    env = { ...process.env, PATH: bareBin() };
    delete env.WEFT_BUILD_FROM_SOURCE;
    delete env.WEFT_SKIP_NATIVE;
    delete env.WEFT_NATIVE_PATH;
    const t1 = performance.now();
    installed = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], project, env);
    console.log(`test/package: npm pack ${((t1 - t0) / 1000).toFixed(1)} s, npm install ${((performance.now() - t1) / 1000).toFixed(1)} s`);
  }, 300_000);

  it('holds the prebuilt linux-x64 binary, built from the native sources of this tree', () => {
    expect(files).toContain('prebuilds/linux-x64/weft_native.node');
    expect(files).toContain('prebuilds/linux-x64/weft_native.json');
    // Every prebuilt (more platforms may be collected from CI runners) must come from these sources.
    for (const json of files.filter((f) => /^prebuilds\/[^/]+\/weft_native\.json$/.test(f))) {
      const info = JSON.parse(execFileSync('tar', ['-xOzf', tarball, `package/${json}`], { encoding: 'utf8' }));
      expect(info, json).toMatchObject({ napiVersion: 8, sourceHash: nativeSourceHash(repoRoot) });
      expect(`prebuilds/${String(info.platform)}-${String(info.arch)}/weft_native.json`).toBe(json);
    }
  });

  it('carries no CommonJS CLI bundle, no source maps, no sources, and no prepare script', () => {
    expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/cli.js', 'bin/weft.js']));
    expect(files.filter((f) => f === 'dist/cli.cjs' || f.endsWith('.map') || f.startsWith('src/'))).toEqual([]);
    expect(packedManifest.scripts.prepare).toBeUndefined();
    expect(packedManifest.scripts.install).toBe('node scripts/install.cjs');
  });

  it('installs with no compiler on PATH, compiling nothing; npm names only the install script', () => {
    expect(run('sh', ['-c', 'command -v cmake || command -v c++ || command -v g++ || command -v cc'], project, env).status).not.toBe(0);
    expect(installed.status, output(installed)).toBe(0);
    expect(existsSync(join(project, 'node_modules', 'weft', 'native', 'build'))).toBe(false);
    const warning = installed.stderr.split('\n').filter((line) => line.includes('weft@'));
    if (warning.length > 0) expect(warning.join('\n')).toMatch(/weft@[\d.]+ \(install: node scripts\/install\.cjs\)$/);
    expect(installed.stderr).not.toContain('prepare');
  });

  it('generates with the demo model through the CLI and through the library (ESM and CommonJS)', () => {
    const cli = run('node', ['node_modules/weft/bin/weft.js', 'generate', '-m', 'node_modules/weft/models/weft-demo', '-n', '8', '-t', '0', '-q', 'Hi'], project, env);
    expect(cli.status, output(cli)).toBe(0);
    expect(cli.stdout.trim().length).toBeGreaterThan(0);
    const script = `
      const { Pipeline, demoModelPath } = IMPORT;
      const pipe = await Pipeline.create({ model: demoModelPath(), kvCache: { size: '8MB' } });
      const reply = await pipe.chat([{ role: 'user', content: 'What is 37 times 12.5?' }], { maxTokens: 24, temperature: 0 });
      await pipe.close();
      // The text sandbox (dist/text-worker.js) served that chat; the isolated child is dist/isolated-child.js.
      const isolated = await Pipeline.create({ model: demoModelPath(), kvCache: { size: '8MB' }, isolation: 'process' });
      const again = await isolated.chat([{ role: 'user', content: 'What is 37 times 12.5?' }], { maxTokens: 24, temperature: 0 });
      await isolated.close();
      if (again.text !== reply.text) throw new Error('the isolated pipeline replied differently');
      console.log(JSON.stringify({ model: demoModelPath(), tokens: reply.usage.completionTokens }));`;
    writeFileSync(join(project, 'esm.mjs'), script.replace('IMPORT', "await import('weft')"));
    writeFileSync(join(project, 'cjs.cjs'), `(async () => { ${script.replace('IMPORT', "require('weft')")} })();`);
    for (const file of ['esm.mjs', 'cjs.cjs']) {
      const result = run('node', [file], project, env);
      expect(result.status, output(result)).toBe(0);
      const printed = JSON.parse(result.stdout.trim()) as { model: string; tokens: number };
      expect(printed.model).toBe(join(project, 'node_modules', 'weft', 'models', 'weft-demo'));
      expect(printed.tokens).toBeGreaterThan(0);
    }
  });

  it('the ESM and CommonJS bundles expose the same API', () => {
    const names = (loader: string) => {
      const result = run('node', ['--input-type=module', '-e', `${loader}; console.log(JSON.stringify(Object.keys(m).filter((k) => k !== '__esModule' && k !== 'default').sort()))`], project, env);
      expect(result.status, output(result)).toBe(0);
      return JSON.parse(result.stdout) as string[];
    };
    const esm = names("const m = await import('weft')");
    const cjs = names("import { createRequire } from 'node:module'; const m = createRequire(process.cwd() + '/')('weft')");
    expect(esm).toEqual(expect.arrayContaining(['Pipeline', 'CpuBackend', 'createToolParser', 'ChatTemplate', 'WeftError', 'AbortError', 'demoModelPath']));
    expect(cjs).toEqual(esm);
  });

  it('WEFT_BUILD_FROM_SOURCE=1 without a compiler fails loudly, saying what is missing', () => {
    const rebuild = run('npm', ['rebuild', 'weft'], project, { ...env, WEFT_BUILD_FROM_SOURCE: '1' });
    expect(rebuild.status).not.toBe(0);
    expect(output(rebuild)).toContain('[weft] compiling the native CPU backend failed');
    expect(output(rebuild)).toContain('It needs cmake >= 3.15 and a C++17 compiler');
    expect(output(rebuild)).toContain('WEFT_SKIP_NATIVE=1');
    // The package is still there and its prebuilt still serves; asked to skip it, the first use names the failed build's log.
    const generate = ['node_modules/weft/bin/weft.js', 'generate', '-m', 'node_modules/weft/models/weft-demo', '-n', '4', '-q', 'Hi'];
    expect(run('node', generate, project, env).status).toBe(0);
    const fromSource = run('node', generate, project, { ...env, WEFT_BUILD_FROM_SOURCE: '1' });
    expect(fromSource.status).toBe(1);
    expect(fromSource.stderr).toContain('NATIVE_BACKEND_UNAVAILABLE');
    expect(fromSource.stderr).toContain('the build from source during npm install failed (its log: ');
  });

  it('a prebuilt that no longer matches the native sources beside it is never loaded', () => {
    // Runs last: it edits the installed package.
    const source = join(project, 'node_modules', 'weft', 'native', 'src', 'addon.cc');
    writeFileSync(source, `${readFileSync(source, 'utf8')}\n// edited\n`);
    const generate = run('node', ['node_modules/weft/bin/weft.js', 'generate', '-m', 'node_modules/weft/models/weft-demo', '-n', '4', '-q', 'Hi'], project, env);
    expect(generate.status).toBe(1);
    expect(generate.stderr).toContain('is not used: built from other native sources');
  });
});
