// Checks chat_template.jinja under @huggingface/jinja (what weft uses) against chat_format.py's
// renders: node tools/demo-model/check_format.mjs renders.jsonl
import { readFileSync } from 'node:fs';
import { Template } from '@huggingface/jinja';

const dir = new URL('.', import.meta.url);
const template = new Template(readFileSync(new URL('chat_template.jinja', dir), 'utf8'));
const tools = JSON.parse(readFileSync(new URL('../../models/weft-demo/tools.json', dir), 'utf8'));
const lines = readFileSync(process.argv[2], 'utf8').trim().split('\n');
let bad = 0;
for (const line of lines) {
  const c = JSON.parse(line);
  const got = template.render({ messages: c.messages, tools, add_generation_prompt: c.add_generation_prompt });
  if (got !== c.text) {
    if (bad++ < 3) {
      let i = 0;
      while (got[i] === c.text[i]) i++;
      console.log('MISMATCH at', i, JSON.stringify(c.text.slice(i - 80, i + 80)), '\n got', JSON.stringify(got.slice(i - 80, i + 80)));
    }
  }
}
console.log(`${lines.length - bad}/${lines.length} renders match`);
process.exit(bad ? 1 : 0);
