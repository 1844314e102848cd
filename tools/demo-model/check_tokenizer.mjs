// Checks tokenizer.json under @huggingface/tokenizers (what weft uses): ids equal the reference
// encoder's and decoding gives the text back. node check_tokenizer.mjs <model dir> <renders+ids.jsonl>
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';

const [dir, file] = process.argv.slice(2);
const tok = new Tokenizer(JSON.parse(readFileSync(join(dir, 'tokenizer.json'), 'utf8')),
  JSON.parse(readFileSync(join(dir, 'tokenizer_config.json'), 'utf8')));
let bad = 0, n = 0, tokens = 0;
const extra = ['héllo wörld ☃ 😀', '  two  spaces\n\n\tand tabs ', 'x = 3.14159; y = -42'];
for (const text of extra) {
  const ids = tok.encode(text, { add_special_tokens: false }).ids;
  if (tok.decode(ids, { skip_special_tokens: false }) !== text) { bad++; console.log('ROUNDTRIP', JSON.stringify(text)); }
}
for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
  const c = JSON.parse(line); n++;
  const ids = tok.encode(c.text, { add_special_tokens: false }).ids;
  tokens += ids.length;
  const same = ids.length === c.ids.length && ids.every((v, i) => v === c.ids[i]);
  const back = tok.decode(ids, { skip_special_tokens: false });
  if (!same || back !== c.text) {
    if (bad++ < 3) console.log('MISMATCH', same, back === c.text, JSON.stringify(c.text.slice(-200)), ids.slice(-20), c.ids.slice(-20));
  }
}
console.log(`${n - bad}/${n} texts: same ids and round trip; ${(tokens / n).toFixed(0)} tokens per text`);
process.exit(bad ? 1 : 0);
