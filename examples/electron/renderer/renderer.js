// The renderer: sends a question, streams the reply as it is generated, and cancels on request.
// It sees only window.weft (preload.ts); the model and its tools live in the main process.
const $ = (id) => document.getElementById(id);
const windowNumber = new URLSearchParams(location.search).get('window') ?? '?';
document.title = `weft window ${windowNumber}`;
let current; // the running request's id

function append(text, className) {
  const span = document.createElement('span');
  if (className) span.className = className;
  span.textContent = text;
  $('output').append(span);
  $('output').scrollTop = $('output').scrollHeight;
}

window.weft.onPart(({ requestId, part }) => {
  if (requestId !== current) return;
  if (part.type === 'reasoning-delta') append(part.text, 'reasoning');
  else if (part.type === 'text-delta') append(part.text);
  else if (part.type === 'tool-call') append(`\n${part.name}(${JSON.stringify(part.arguments)})`, 'tool');
  else if (part.type === 'tool-result') append(` -> ${JSON.stringify(part.result)}\n`, 'tool');
});

window.weft.onEnd((end) => {
  if (end.requestId !== current) return;
  current = undefined;
  $('send').disabled = false;
  $('cancel').disabled = true;
  if (end.status === 'done') $('status').textContent = `done: ${end.finishReason}, ${end.usage.completionTokens} tokens, ${end.rounds} round(s)`;
  else if (end.status === 'cancelled') $('status').textContent = 'cancelled';
  else $('status').textContent = `error ${end.code}: ${end.message}`;
});

$('send').addEventListener('click', async () => {
  current = crypto.randomUUID();
  $('output').textContent = '';
  $('status').textContent = 'generating...';
  $('send').disabled = true;
  $('cancel').disabled = false;
  await window.weft.generate({ requestId: current, messages: [{ role: 'user', content: $('prompt').value }] });
});

$('cancel').addEventListener('click', () => {
  if (current) void window.weft.cancel(current);
});
