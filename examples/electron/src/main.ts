/**
 * Electron's main process: one weft pipeline for the whole app, several
 * windows streaming from it at once over IPC (generation-service.ts), each
 * with a cancel button. The app owns the pipeline: it opens it before the
 * first window and closes it when the app quits.
 *
 *   npm install && npm start        (in examples/electron; see README.md)
 */
import { readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { app, BrowserWindow, ipcMain, Menu } from 'electron';
import { Pipeline, type ToolDefinition } from 'weft';
import { demoToolImplementations } from './demo-tools.js';
import { GenerationService } from './generation-service.js';

/**
 * The model folder as a real path. weft's native backend reads the weights
 * with its own file I/O, which cannot look inside app.asar, so a packaged app
 * keeps the model unpacked (see README.md, "Packaging").
 */
function modelDir(): string {
  if (process.env.WEFT_MODEL) return process.env.WEFT_MODEL;
  const weftRoot = dirname(require.resolve('weft/package.json'));
  return join(weftRoot, 'models', 'weft-demo').replace(`app.asar${sep}`, `app.asar.unpacked${sep}`);
}

let windows = 0;
function openWindow(): void {
  const n = ++windows;
  const window = new BrowserWindow({
    width: 640,
    height: 560,
    x: 40 + 60 * ((n - 1) % 6),
    y: 40 + 40 * ((n - 1) % 6),
    title: `weft window ${n}`,
    webPreferences: { preload: join(__dirname, 'preload.js'), contextIsolation: true, sandbox: true },
  });
  void window.loadFile(join(__dirname, '..', 'renderer', 'index.html'), { query: { window: String(n) } });
}

async function main(): Promise<void> {
  await app.whenReady();
  const model = modelDir();
  const pipeline = await Pipeline.create({ model, parsers: { tool: 'qwen3coder', reasoning: 'qwen3' } });
  const tools = JSON.parse(readFileSync(join(model, 'tools.json'), 'utf8')) as ToolDefinition[];
  const service = new GenerationService(pipeline, { tools, toolImplementations: demoToolImplementations, chatOptions: { temperature: 0 } });
  const unregister = service.register(ipcMain);

  Menu.setApplicationMenu(
    Menu.buildFromTemplate([
      { label: 'File', submenu: [{ label: 'New window', accelerator: 'CmdOrCtrl+N', click: openWindow }, { role: 'quit' }] },
      { role: 'viewMenu' },
    ]),
  );
  for (let i = 0; i < 3; i++) openWindow();

  app.on('window-all-closed', () => app.quit());
  // Close the pipeline before the process goes: pending requests end, the model's memory is freed.
  let closed = false;
  app.on('will-quit', (event) => {
    if (closed) return;
    event.preventDefault();
    unregister();
    void pipeline.close().finally(() => {
      closed = true;
      app.quit();
    });
  });
}

main().catch((error: unknown) => {
  console.error(error);
  app.exit(1);
});
