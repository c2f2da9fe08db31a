// Static export: `tbsim view RUN… --export DIR` opens from disk (file://) in
// Chromium with no server running, every view works, and the page makes no
// request beyond its own files.

import assert from 'node:assert/strict';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { launch, tbsimSync, tempDir, tid, until } from './lib.mjs';

let tmp;
let browser;
let site;

before(async () => {
  tmp = tempDir();
  for (const [agent, out] of [['oracle', 'oracle'], ['adversary:read-everything', 'explore']]) {
    const r = tbsimSync(['run', 'content/scenarios/busy-day.ron', '--agent', agent, '--out', join(tmp, out, 'busy-day')]);
    if (r.status !== 0) throw new Error(r.stderr);
  }
  site = join(tmp, 'site');
  const r = tbsimSync(['view', join(tmp, 'oracle'), join(tmp, 'explore'), '--export', site]);
  assert.equal(r.status, 0, r.stderr);
  browser = await launch({ width: 1280, height: 800 });
});

after(async () => {
  if (browser) await browser.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('an export opens from disk with no server: runs, timeline, world, files, compare', async () => {
  const { page, errors } = browser;
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const index = pathToFileURL(join(site, 'index.html')).href;
  await page.goto(index);
  await page.locator(tid('run-row-oracle:busy-day')).waitFor();
  assert.match(await page.locator(tid('mode')).textContent(), /static export/);
  // A run at a step: timeline, scrubber, world.
  await page.goto(`${index}#/run/${encodeURIComponent('oracle:busy-day')}/step/6`);
  await until(async () => Number(await page.locator(tid('timeline-count')).getAttribute('data-count')) > 20, { what: 'the timeline' });
  await until(async () => (await page.locator(tid('world-note')).getAttribute('data-step')) === '6', { what: 'the world at step 6' });
  // Forking needs a server: not offered.
  assert.equal(await page.locator(tid('fork-button')).isVisible(), false);
  // Scrub to the end: the world follows.
  await page.locator(tid('scrub-latest')).click();
  await until(async () => Number(await page.locator(tid('world-note')).getAttribute('data-step')) > 6, { what: 'the last world' });
  // Files: open one from the drive.
  await page.locator(tid('tab-files')).click();
  const fileLink = page.locator(`${tid('file-tree')} button, ${tid('file-tree')} a`).first();
  await fileLink.click();
  await until(async () => (await page.locator(`${tid('file-text')}, ${tid('file-image')}`).count()) > 0, { what: 'a file shown' });
  // Chats and calendar panels render.
  await page.locator(tid('tab-chats')).click();
  await page.locator(tid('tab-calendar')).click();
  // Compare, from the list.
  await page.goto(index);
  await page.locator(tid('compare-select-oracle:busy-day')).check();
  await page.locator(tid('compare-select-explore:busy-day')).check();
  await page.locator(tid('compare-selected')).click();
  await page.locator(tid('divergence-row')).waitFor();
  // Nothing but the export's own files was asked for.
  const foreign = requests.filter((u) => !u.startsWith(pathToFileURL(site).href) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, [], 'no network request');
  assert.ok(requests.some((u) => /\/data\/run-\d+\.js$/.test(u)), 'run data loaded on demand');
  assert.deepEqual(errors, []);
});

test('an export is sized like its runs and loaded a page at a time; batch compare both ways', async () => {
  // A run past one timeline page: the adversary on two days.
  const out = join(tmp, 'long');
  let r = tbsimSync(['run', 'content/scenarios/two-days.ron', '--agent', 'adversary:combined', '--out', join(out, 'adv', 'two-days')]);
  assert.equal(r.status, 0, r.stderr);
  r = tbsimSync(['run', 'content/scenarios/two-days.ron', '--agent', 'oracle', '--out', join(out, 'orc', 'two-days')]);
  assert.equal(r.status, 0, r.stderr);
  const site2 = join(tmp, 'site2');
  r = tbsimSync(['view', join(out, 'adv'), join(out, 'orc'), '--export', site2]);
  assert.equal(r.status, 0, r.stderr);
  const data = join(site2, 'data');
  const files = readdirSync(data);
  const traj = statSync(join(out, 'adv', 'two-days', 'trajectory.jsonl')).size;
  const index = readFileSync(join(data, 'index.js'), 'utf8');
  const n = JSON.parse(index.slice(index.indexOf('(') + 1, index.lastIndexOf(')'))).files['adv:two-days'].replace('data/', '');
  const mine = files.filter((f) => f === `${n}.js` || f.startsWith(`${n}-`));
  const pages = mine.filter((f) => f.startsWith(`${n}-tl-`));
  assert.ok(pages.length >= 2, `the timeline in pages: ${mine.join(' ')}`);
  const bytes = mine.reduce((t, f) => t + statSync(join(data, f)).size, 0);
  // The run's files carry the scenario's drive too (not in the trajectory).
  const drive = mine.filter((f) => f.startsWith(`${n}-files-`)).reduce((t, f) => t + statSync(join(data, f)).size, 0);
  assert.ok(bytes - drive <= 2 * traj, `export ${bytes - drive} bytes (+${drive} of files) for a ${traj}-byte trajectory`);
  // Both orders of the batch comparison.
  assert.ok(index.includes('"batches=adv,orc"') && index.includes('"batches=orc,adv"'), 'batch compare stored both ways');

  // Opened at a step: the run's worlds and the first timeline page, not every page.
  const page = await browser.context.newPage();
  const asked = [];
  page.on('request', (q) => asked.push(q.url()));
  const home = pathToFileURL(join(site2, 'index.html')).href;
  await page.goto(`${home}#/run/${encodeURIComponent('adv:two-days')}/step/3`);
  await until(async () => (await page.locator(tid('world-note')).getAttribute('data-step')) === '3', { what: 'the world at step 3' });
  await page.locator(`${tid('timeline')} > li`).first().waitFor();
  const first = asked.filter((u) => u.includes(`/data/${n}-tl-`));
  assert.ok(first.length >= 1 && first.some((u) => u.endsWith(`${n}-tl-0.js`)), 'the first page loaded');
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the whole timeline, page by page' });
  assert.equal(asked.filter((u) => u.includes(`/data/${n}-tl-`)).length, pages.length, 'each page once');
  // Batch compare, in the order the picker did not store before.
  await page.goto(`${home}#/compare/batches/orc,adv`);
  await page.locator(tid('compare-contrasts')).waitFor();
  await page.locator(tid('compare-scenarios')).waitFor();
  assert.equal(await page.locator(`${tid('scenario-row')}`).count(), 1);
  assert.ok(await page.locator(`${tid('pair-a')}`).count() >= 1, 'links to both runs');
  await page.close();
});
