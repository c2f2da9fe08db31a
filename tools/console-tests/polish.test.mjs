// Polish: Markdown in task text rendered as elements (no raw backticks, no HTML
// from data), one state word per row, a favicon, the step count the same in every
// panel, a dark theme following the system.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, launch, oracleRun, startView, tempDir, tid, until } from './lib.mjs';

let tmp;
let oracleDir;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  oracleDir = oracleRun('busy-day', join(tmp, 'busy-day'));
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('markdown, states, favicon, step counts and the dark theme', async () => {
  const server = await startView([oracleDir], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const notFound = [];
  page.on('response', (r) => { if (r.status() === 404) notFound.push(r.url()); });
  const { runs } = await api(server.url, '/v1/console/runs');
  const id = runs[0].id;

  await page.goto(`${server.url}/#/`);
  await page.locator(tid(`run-row-${id}`)).waitFor();
  const rowText = await page.locator(tid(`run-row-${id}`)).textContent();
  assert.ok(!/finished\s+finished/.test(rowText), rowText);
  assert.ok(await page.evaluate(() => !!document.querySelector('link[rel="icon"]')), 'a favicon');

  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}`);
  await page.locator(tid('task-list')).waitFor({ timeout: 20_000 });
  // busy-day's objectives hold `code`: shown as <code>, never as backticks.
  const w = await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}/world`);
  const withCode = w.tasks.filter((t) => /`[^`]+`/.test(t.objective || ''));
  assert.ok(withCode.length > 0, 'an objective with `code`');
  for (const t of withCode) {
    const el = page.locator(`${tid(`task-${t.key}`)} ${tid('task-objective')}`);
    assert.ok(!(await el.textContent()).includes('`'), 'no raw backticks');
    const code = t.objective.match(/`([^`]+)`/)[1];
    assert.ok((await el.locator('code').allTextContents()).includes(code));
  }
  // One step count everywhere.
  const of = (t) => (t.match(/of (\d+)/) || [])[1];
  await until(async () => of(await page.locator(tid('world-note')).textContent()) !== undefined, { what: 'the world note' });
  assert.equal(of(await page.locator(tid('world-note')).textContent()), of(await page.locator(tid('scrub-label')).textContent()));
  // Entry numbers and the count agree.
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the timeline' });
  const lastI = await page.locator(`${tid('timeline')} > li`).last().getAttribute('data-i');
  assert.ok((await page.locator(tid('timeline-count')).textContent()).includes(`#${lastI}`));

  // Dark theme.
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.emulateMedia({ colorScheme: 'light' });
  const light = await bg();
  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await bg();
  const lum = (c) => c.match(/\d+/g).slice(0, 3).map(Number).reduce((a, b) => a + b, 0);
  assert.ok(lum(dark) < 150 && lum(light) > 600, `${light} → ${dark}`);
  await page.emulateMedia({ colorScheme: 'light' });
  assert.deepEqual(notFound, []);
  assert.deepEqual(errors, []);
});
