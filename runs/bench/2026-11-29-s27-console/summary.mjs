// Medians, ranges and after/before ratios of ab.mjs rows (JSON lines on stdin or a file).
//   node summary.mjs ab-final.jsonl
import { readFileSync } from 'node:fs';

const rows = readFileSync(process.argv[2], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const pick = {
  'runs list, 50+ rows and a frame': (r) => r.list_ms,
  'long run, first open (replay): rows': (r) => [r.long_open_ms[0].rows],
  'long run, first open (replay): world': (r) => [r.long_open_ms[0].world],
  'long run, later opens: first rows': (r) => r.long_open_ms.slice(1).map((o) => o.rows),
  'long run, later opens: world drawn': (r) => r.long_open_ms.slice(1).map((o) => o.world),
  '"Next", steps 2-10': (r) => r.next_ms.slice(1),
  '"Next", first step': (r) => [r.next_ms[0]],
  '20-step drag until the end shows': (r) => [r.drag_ms],
  'of which after the last input': (r) => [r.drag_settle_ms],
};
const loads = rows.map((r) => Number(r.load.split(' ')[0]));
console.log(`load (1-min average) ${Math.min(...loads)}-${Math.max(...loads)}`);
console.log('| what | before median (range) | after median (range) | after/before | ≤ 300 ms before / after |');
console.log('|---|---|---|---|---|');
for (const [what, f] of Object.entries(pick)) {
  const b = rows.filter((r) => r.build === 'before').flatMap(f);
  const a = rows.filter((r) => r.build === 'after').flatMap(f);
  const under = (xs) => `${xs.filter((x) => x <= 300).length} of ${xs.length}`;
  console.log(`| ${what} | ${med(b)} ms (${Math.min(...b)}-${Math.max(...b)}) | ${med(a)} ms (${Math.min(...a)}-${Math.max(...a)}) | ${(med(a) / med(b)).toFixed(2)} | ${under(b)} / ${under(a)} |`);
}
