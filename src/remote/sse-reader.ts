/**
 * Reads a server-sent event stream (a fetch Response body) as its `data:`
 * payloads, in order, up to `[DONE]` or the end of the body. Events may be
 * split across network chunks anywhere, including inside a UTF-8 character.
 */

export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // Events end at a blank line; servers use \n or \r\n.
      const events = buffer.split(/\r?\n\r?\n/);
      buffer = done ? '' : events.pop()!;
      for (const event of events) {
        const data = event
          .split(/\r?\n/)
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).replace(/^ /, ''))
          .join('\n');
        if (data === '') continue;
        if (data === '[DONE]') return;
        yield data;
      }
      if (done) return;
    }
  } finally {
    // Leaving early closes the HTTP stream.
    await reader.cancel().catch(() => undefined);
  }
}
