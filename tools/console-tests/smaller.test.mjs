// Issue 40's smaller items, each a check that fails without its fix: names instead
// of keys on the timeline, one "took" figure a call, serve's sessions named by
// scenario and agent (not a 32-hex id), guidance Markdown rendered, the list's
// "Compare" header on one line, and the batch picker offering a `--trials` folder
// as one batch (not one prefix per scenario).

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, jsonLines, launch, oracleRun, runIdOf, startServe, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

let tmp;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const KEY = /\b(task|npc|thread|meeting|person)\/[a-z0-9][a-z0-9/-]*/;

test('the timeline names tasks, people, threads and meetings; a call shows one "took" figure', async () => {
  const dir = oracleRun('two-days', join(tmp, 'orc'));
  const server = await startView([dir], join(tmp, 'forks-names'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  await page.goto(`${server.url}/#/run/${encodeURIComponent(runs[0].id)}`);
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the whole timeline' });
  // Event rows: what happened and to whom, in names (the message texts themselves
  // are the colleagues' words, left as written).
  const heads = await page.locator(`${tid('timeline')} > li[data-type="event"]`).evaluateAll((ls) => ls.map((li) => {
    const t = li.querySelector('.body') ? li.querySelector('.body').textContent : li.textContent;
    // "Message from X in Y: text" — the part before the text.
    const m = t.match(/^(.*?Message from .*? in .*?):/s);
    return m ? m[1] : t;
  }));
  assert.ok(heads.length > 5, `event rows: ${heads.length}`);
  const keyed = heads.filter((t) => KEY.test(t));
  assert.deepEqual(keyed, [], 'event rows naming keys');
  assert.ok(heads.some((t) => /Task released: /.test(t)), 'a task release');
  assert.ok(heads.some((t) => /Message from [A-Z]/.test(t)), 'a colleague by name');
  // Results: one figure, the minutes the call moved the clock (a `wait` its
  // wait, not its listed cost of 0), never "took 0 min".
  const took = await page.locator(`${tid('timeline')} > li[data-type="result"] ${tid('entry-took')}`).allTextContents();
  const want = [];
  let prev = null;
  for (const l of jsonLines(join(dir, 'trajectory.jsonl'))) {
    if (l.type === 'decision') prev = l.t;
    if (l.type === 'result') {
      const m = Math.round((l.t - prev) / 60);
      want.push(m ? ` · took ${m} min` : '');
      prev = l.t;
    }
  }
  assert.ok(want.some((t) => /took (\d{2,}) min/.test(t)), 'a long wait');
  assert.deepEqual(took, want);
  assert.deepEqual(errors, []);
});

test('serve: sessions are named by scenario and agent; guidance Markdown is rendered', async () => {
  const out = join(tmp, 'serve');
  const server = await startServe(out);
  servers.push(server);
  const { page, errors } = browser;
  await page.goto(`${server.url}/#/`);
  await page.locator(tid('start-form')).waitFor();
  await page.selectOption(tid('start-scenario'), 'meeting-only');
  await page.selectOption(tid('start-agent'), 'oracle');
  await page.check(tid('start-paused'));
  await page.click(tid('start-submit'));
  const id = await until(() => runIdOf(page), { what: 'the run view' });
  assert.match(id, /^[0-9a-f]{32}$/, 'a session id');
  await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'paused', { what: 'paused' });
  // A message in Markdown, applied at the next decision.
  await page.fill(tid('guide-from'), 'ana');
  await page.click(tid('btn-step'));
  await page.locator(`${tid('guide-task')} option[value="task/standup"]`).waitFor({ state: 'attached', timeout: 20_000 });
  // The hint button says what it would send: the next tier's text, which is
  // what the run then records; after it, the tier after.
  const preview = page.locator(tid('hint-preview-task/standup'));
  await until(async () => (await preview.getAttribute('data-tier')) === '1', { what: 'the tier 1 preview' });
  const tier1 = (await preview.textContent()).replace(/^Next, tier 1: /, '');
  assert.ok(tier1.length > 10, tier1);
  await page.click(tid('hint-task/standup'));
  await until(async () => (await preview.getAttribute('data-tier')) === '2', { what: 'the tier 2 preview' });
  assert.notEqual((await preview.textContent()).replace(/^Next, tier 2: /, ''), tier1);
  // A person playing: no preview of anything of that scenario.
  const play = await (await fetch(`${server.url}/v1/console/start`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tbsim-Console': '1' }, body: JSON.stringify({ scenario: 'meeting-only', agent: 'human:tester' }) })).json();
  for (const run of [play.id, id]) {
    const res = await fetch(`${server.url}/v1/console/runs/${run}/hints`);
    assert.equal(res.status, 403, `hints of ${run} while meeting-only is played`);
  }
  const closed = await fetch(`${server.url}/v1/console/runs/${play.id}/close`, { method: 'POST', headers: { 'X-Tbsim-Console': '1' } });
  assert.ok(closed.ok, `close: ${closed.status}`);
  await until(async () => (await fetch(`${server.url}/v1/console/runs/${id}/hints`)).status === 200, { what: 'hints again once the play is closed' });
  await page.selectOption(tid('guide-task'), 'task/standup');
  await page.fill(tid('guide-text'), 'Write **the cap** to `workspace/purchasing_sync_decision.json`.');
  await page.click(tid('guide-send'));
  await until(async () => /queued/i.test(await page.locator(tid('guide-status')).textContent()), { what: 'queued' });
  await page.click(tid('btn-step'));
  // The hint sent is the text previewed.
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="guidance"]`).count()) >= 1, { what: 'the hint on the timeline' });
  assert.ok((await page.locator(`${tid('timeline')} > li[data-type="guidance"]`).first().textContent()).includes(tier1), 'the hint recorded is the one previewed');
  const g = page.locator(`${tid('timeline')} > li[data-type="guidance"] ${tid('guidance-text')}`).filter({ hasText: 'the cap' });
  await g.first().waitFor({ timeout: 20_000 });
  assert.equal(await g.first().locator('strong').textContent(), 'the cap');
  assert.equal(await g.first().locator('code').textContent(), 'workspace/purchasing_sync_decision.json');
  assert.doesNotMatch(await g.first().textContent(), /\*\*/);
  // The list names the session, the id kept in the link's title.
  await page.goto(`${server.url}/#/`);
  const link = page.locator(tid(`run-link-${id}`));
  await link.waitFor();
  const name = await link.textContent();
  assert.equal(name, `meeting-only · oracle · ${id.slice(0, 6)}`);
  assert.equal(await link.getAttribute('title'), id);
  assert.deepEqual(errors, []);
});

test('the "Compare" header stays on one line; a --trials folder is one batch in the picker', async () => {
  const out = join(tmp, 'nightly');
  const r = tbsimSync(['run', 'content/scenarios/meeting-only.ron', 'content/scenarios/two-days.ron', '--agent', 'oracle', '--trials', '2', '--out', out]);
  assert.equal(r.status, 0, r.stderr);
  const base = join(tmp, 'base');
  const r2 = tbsimSync(['run', 'content/scenarios/meeting-only.ron', 'content/scenarios/two-days.ron', '--agent', 'idle', '--trials', '2', '--out', base]);
  assert.equal(r2.status, 0, r2.stderr);
  const server = await startView([out, base], join(tmp, 'forks-trials'));
  servers.push(server);
  for (const width of [1280, 900]) {
    const page = await browser.context.newPage();
    try {
      await page.setViewportSize({ width, height: 800 });
      await page.goto(`${server.url}/#/`);
      await page.locator(`${tid('runs-status')}[data-total="8"]`).waitFor();
      // The header cell's text in one line box (it wrapped a letter a line).
      const lines = await page.locator(`${tid('runs-table')} thead th`).first().evaluate((th) => {
        const range = document.createRange();
        range.selectNodeContents(th);
        const tops = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        return { text: th.textContent, lines: tops.size };
      });
      assert.equal(lines.text, 'Compare');
      assert.equal(lines.lines, 1, `"Compare" on ${lines.lines} lines at ${width}px`);
      const options = await page.locator(`${tid('compare-batch-a')} option`).evaluateAll((os) => os.map((o) => o.value).filter(Boolean));
      assert.deepEqual(options.sort(), ['base', 'nightly'], `batches offered: ${options.join(' ')}`);
    } finally {
      await page.close();
    }
  }
});
