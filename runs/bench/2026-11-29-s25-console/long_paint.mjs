import { join } from 'node:path';
import { launch, startView, tempDir } from '../../../tools/console-tests/lib.mjs';
const tmp = tempDir('tbsim-lp-'); const browser = await launch();
const args = process.argv.slice(2);
const server = await startView(['/tmp/long2000'], join(tmp, 'forks'), args);
const id = (await (await fetch(`${server.url}/v1/console/runs`)).json()).runs[0].id;
const settle = `(sel) => new Promise((ok) => { const look = () => (document.querySelector(sel) ? requestAnimationFrame(() => ok(performance.now())) : requestAnimationFrame(look)); look(); })`;
const out = [];
for (let k = 0; k < 4; k++) {
  const page = await browser.context.newPage();
  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}`);
  const rows = await page.evaluate(`(${settle})('[data-testid="timeline"] > li')`);
  const world = await page.evaluate(`(${settle})('[data-testid="world-note"][data-step]')`);
  out.push({ rows: Math.round(rows), world: Math.round(world) });
  await page.close();
}
console.log(JSON.stringify({ args, loads: out }));
await server.stop(); await browser.close();
