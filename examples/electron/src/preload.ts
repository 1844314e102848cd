/**
 * The renderer's only door to weft: a small API on `window.weft`. Sandboxed
 * preloads can require only 'electron', so the channel names are repeated
 * here; they must match channels.ts (test/electron checks that they do).
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';

type Listener = (message: any) => void;

function subscribe(channel: string, listener: Listener): () => void {
  const wrapped = (_event: IpcRendererEvent, message: unknown) => listener(message);
  ipcRenderer.on(channel, wrapped);
  return () => ipcRenderer.off(channel, wrapped);
}

contextBridge.exposeInMainWorld('weft', {
  generate: (request: unknown) => ipcRenderer.invoke('weft:generate', request),
  cancel: (requestId: string) => ipcRenderer.invoke('weft:cancel', requestId),
  onPart: (listener: Listener) => subscribe('weft:part', listener),
  onEnd: (listener: Listener) => subscribe('weft:end', listener),
});
