// A long run (long-run.sh: every tool free, an adversary deciding until its step
// limit): the timeline comes in pages (the first small, for the first paint), yet
// every entry ends up drawn in order; a step's address, the scrubber and a click on
// an entry still find their step, wherever its page is.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { ROOT, api, jsonLines, launch, startView, tbsimBin, tempDir, tid, until } from './lib.mjs';

/** Decisions of the long run: enough lines for several pages of the timeline. */
const STEPS = 300;

let tmp;
let longDir;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  longDir = join(tmp, 'long');
  const r = spawnSync(join(ROOT, 'tools/console-tests/long-run.sh'), [longDir, String(STEPS)], {
    cwd: ROOT, encoding: 'utf8', timeout: 600_000, env: { ...process.env, TBSIM_BIN: tbsimBin() },
  });
  if (r.status !== 0) throw new Error(`long-run.sh failed (${r.status}):\n${r.stderr}${r.error || ''}`);
  browser = await launch({ width: 1280, height: 700 });
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Whether the step's decision entry is inside the timeline box's visible part. */
async function inView(page, step) {
  return page.evaluate((n) => {
    const li = document.querySelector(`[data-testid="timeline"] > li[data-type="decision"][data-step="${n}"]`);
    const box = li && li.closest('.timeline-box');
    if (!li || !box) return false;
    const a = li.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return a.top >= b.top - 1 && a.top < b.bottom;
  }, step);
}

test('a long timeline is paged, drawn whole and in order, and jumps to any step', async () => {
  const server = await startView([longDir], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const id = runs[0].id;
  const enc = encodeURIComponent(id);
  const { steps } = await api(server.url, `/v1/console/runs/${enc}`);
  assert.equal(steps, STEPS, 'the run went on to its step limit');
  const lines = jsonLines(join(longDir, 'trajectory.jsonl')).length;
  const whole = await api(server.url, `/v1/console/runs/${enc}/timeline?from=0`);
  assert.equal(whole.total, lines);

  // A page: at most `limit` lines, and where the next one starts.
  const first = await api(server.url, `/v1/console/runs/${enc}/timeline?from=0&limit=50`);
  assert.ok(first.lines.length <= 50 && first.next === 50 && first.total === lines, JSON.stringify({ n: first.lines.length, next: first.next }));

  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/timeline?')) asked.push(new URL(r.url()).search); });
  const late = steps - 4;
  await page.goto(`${server.url}/#/run/${enc}/step/${late}`);
  await page.locator(`${tid('world-note')}[data-step="${late}"]`).waitFor({ timeout: 60_000 });
  // Every entry arrives (a page a frame), in line order, each once.
  await until(async () => Number(await page.locator(tid('timeline-count')).getAttribute('data-count')) === whole.lines.length,
    { timeoutMs: 120_000, what: `all ${whole.lines.length} entries drawn` });
  const order = await page.evaluate(() => [...document.querySelectorAll('[data-testid="timeline"] > li')].map((li) => Number(li.dataset.i)));
  assert.deepEqual(order, whole.lines.map((l) => l.i));
  assert.match(asked[0], /from=0&limit=\d+/, 'the first paint asks for one page');
  assert.ok(asked.length > 2, `pages asked: ${asked.join(' ')}`);

  // The step in the address is scrolled to, though its page came last.
  await until(() => inView(page, late), { timeoutMs: 30_000, what: `step ${late} scrolled into the timeline` });
  assert.equal(await page.locator(`${tid('timeline')} > li.current`).getAttribute('data-step'), String(late));

  // The scrubber jumps back to the start, and the world follows.
  await page.locator(tid('scrub-range')).fill('3');
  await until(() => inView(page, 3), { what: 'step 3 in view' });
  await page.locator(`${tid('world-note')}[data-step="3"]`).waitFor({ timeout: 30_000 });

  // Clicking an entry in the middle moves the scrubber there.
  const mid = Math.floor(steps / 2);
  await page.locator(tid('scrub-range')).fill(String(mid));
  await until(() => inView(page, mid), { what: `step ${mid} in view` });
  await page.locator(`${tid('timeline')} > li[data-type="decision"][data-step="${mid + 1}"] .idx`).click();
  await until(async () => (await page.locator(tid('scrub-label')).getAttribute('data-step')) === String(mid + 1), { what: `the scrubber at ${mid + 1}` });
  await page.locator(`${tid('world-note')}[data-step="${mid + 1}"]`).waitFor({ timeout: 30_000 });
  assert.deepEqual(errors, []);
});

test('a long timeline draws the rows near its view; a drag ends on its last step; far matches and task cards', async () => {
  const server = await startView([longDir], join(tmp, 'forks-band'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const enc = encodeURIComponent(runs[0].id);
  const whole = await api(server.url, `/v1/console/runs/${enc}/timeline?from=0`);
  const mid = Math.floor(STEPS / 2);
  await page.goto(`${server.url}/#/run/${enc}/step/${mid}`);
  await until(async () => Number(await page.locator(tid('timeline-count')).getAttribute('data-count')) === whole.lines.length,
    { timeoutMs: 120_000, what: 'every entry' });
  await until(() => inView(page, mid), { what: `step ${mid} in view` });

  // Every row is in the page with its text; those far from the view are hidden
  // until found (not laid out), the ones in view are drawn.
  const rows = await page.evaluate(() => {
    const lis = [...document.querySelectorAll('[data-testid="timeline"] > li')];
    const box = document.querySelector('.timeline-box').getBoundingClientRect();
    const seen = lis.filter((li) => { const r = li.getBoundingClientRect(); return r.bottom > box.top && r.top < box.bottom; });
    return {
      n: lis.length,
      far: lis.filter((li) => li.getAttribute('hidden') === 'until-found').length,
      empty: lis.filter((li) => !li.textContent.trim()).length,
      seenHidden: seen.filter((li) => li.hasAttribute('hidden')).length,
      seen: seen.length,
    };
  });
  assert.equal(rows.n, whole.lines.length);
  assert.equal(rows.empty, 0);
  assert.ok(rows.far > rows.n / 2, `rows far from the view not drawn: ${JSON.stringify(rows)}`);
  assert.ok(rows.seen > 3 && rows.seenHidden === 0, `rows in view drawn: ${JSON.stringify(rows)}`);

  // A drag sends many inputs a frame: the last one is the step shown, the row
  // scrolled to, the address and the world.
  const to = STEPS - 10;
  await page.evaluate((to) => {
    const r = document.querySelector('[data-testid="scrub-range"]');
    for (let s = 5; s <= to; s += 7) {
      r.value = String(s);
      r.dispatchEvent(new Event('input', { bubbles: true }));
    }
    r.value = String(to);
    r.dispatchEvent(new Event('input', { bubbles: true }));
  }, to);
  await page.locator(`${tid('world-note')}[data-step="${to}"]`).waitFor({ timeout: 30_000 });
  await until(() => inView(page, to), { what: `step ${to} in view after the drag` });
  assert.equal(await page.locator(`${tid('timeline')} > li.current`).getAttribute('data-step'), String(to));
  await until(async () => (await page.evaluate(() => location.hash)).endsWith(`/step/${to}`), { what: 'the address at the last step' });
  const later = await page.evaluate(() => [...document.querySelectorAll('[data-testid="timeline"] > li.future[data-type="decision"]')].map((li) => Number(li.dataset.step)));
  assert.equal(later.length, STEPS - to, 'the decisions after the step are dimmed');
  assert.ok(later.every((s) => s > to));

  // The world's task cards: one kept where its task did not change, redrawn where it did.
  const wa = await api(server.url, `/v1/console/runs/${enc}/world?step=${to}`);
  const wb = await api(server.url, `/v1/console/runs/${enc}/world?step=${to + 1}`);
  await page.evaluate(() => { for (const el of document.querySelectorAll('[data-testid="task-list"] > article')) el.tbMark = true; });
  await page.click(tid('scrub-next'));
  await page.locator(`${tid('world-note')}[data-step="${to + 1}"]`).waitFor({ timeout: 30_000 });
  const cards = await page.evaluate(() => [...document.querySelectorAll('[data-testid="task-list"] > article')].map((el) => ({ id: el.dataset.testid, kept: !!el.tbMark, status: el.dataset.status })));
  assert.deepEqual(cards.map((c) => c.id), wb.tasks.map((t) => `task-${t.key}`));
  for (const [k, t] of wb.tasks.entries()) {
    const before = wa.tasks.find((x) => x.key === t.key);
    assert.equal(cards[k].kept, JSON.stringify(before) === JSON.stringify(t), `task ${t.key} redrawn only if it changed`);
    assert.equal(cards[k].status, t.status);
  }

  // A search match far from the view (hidden until found) is drawn and scrolled to.
  await page.locator(tid('timeline-search')).fill('Step 3 decision');
  await until(async () => (await page.locator(tid('search-count')).getAttribute('data-count')) === '1', { what: 'one match' });
  const here = page.locator(`${tid('timeline')} > li.search-here`);
  assert.equal(await here.getAttribute('data-step'), '3');
  await until(() => inView(page, 3), { what: 'the match in view' });
  assert.equal(await here.getAttribute('hidden'), null);
  assert.deepEqual(errors, []);
});

/** What the page does with a world answered as changes (app.js applyWorldDelta). */
function applyDelta(held, d) {
  const w = {};
  for (const k of d.same) w[k] = held[k];
  for (const [k, v] of Object.entries(d.set)) w[k] = v;
  for (const [k, a] of Object.entries(d.arrays)) {
    let j = 0;
    w[k] = a.old.map((i) => (i < 0 ? a.new[j++] : held[k][i]));
  }
  return w;
}

/** The text of the world's four panels, each drawn by showing its tab. */
async function panelsText(page) {
  const out = {};
  for (const key of ['tasks', 'files', 'chats', 'calendar']) {
    await page.click(tid(`tab-${key}`));
    out[key] = await page.locator(tid(`panel-${key}`)).innerText();
  }
  return out;
}

test('scrubbing asks for each world as the changes from the one shown, and draws what a fresh load draws', async () => {
  const server = await startView([longDir], join(tmp, 'forks-delta'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const enc = encodeURIComponent(runs[0].id);
  const from = 150;
  const worlds = [];
  const onResponse = async (r) => {
    if (!r.url().includes(`/v1/console/runs/${enc}/world`)) return;
    try {
      worlds.push({ url: new URL(r.url()), text: await r.text() });
    } catch { /* a page gone */ }
  };
  page.on('response', onResponse);
  await page.goto(`${server.url}/#/run/${enc}/step/${from}`);
  await page.locator(`${tid('world-note')}[data-step="${from}"]`).waitFor({ timeout: 30_000 });
  // The chats shown while scrubbing: their panel is drawn at every step.
  await page.click(tid('tab-chats'));
  for (let s = from + 1; s <= from + 6; s++) {
    await page.click(tid('scrub-next'));
    await page.locator(`${tid('world-note')}[data-step="${s}"]`).waitFor();
  }
  const to = from + 30;
  await page.locator(tid('scrub-range')).fill(String(to));
  await page.locator(`${tid('world-note')}[data-step="${to}"]`).waitFor();
  page.off('response', onResponse);

  // Every world after the first was asked against the one held, and came as its
  // changes: smaller than the whole world, and the whole world once applied.
  const asked = worlds.filter((w) => w.url.searchParams.has('since'));
  assert.ok(asked.length >= 6, `worlds asked as changes: ${asked.length} of ${worlds.length}`);
  const whole = async (step) => {
    const res = await fetch(`${server.url}/v1/console/runs/${enc}/world?step=${step}`);
    assert.ok(res.headers.get('x-tbsim-world-id'), 'the world route names its view');
    return res.text();
  };
  for (const w of asked) {
    const d = JSON.parse(w.text);
    const since = Number(w.url.searchParams.get('since'));
    const step = Number(w.url.searchParams.get('step'));
    assert.equal(d.delta_since, since, `${w.url.search}: an answer as changes`);
    const full = await whole(step);
    // A step changes a thread or two, sent whole: a share of the world, not all of it.
    const most = step - since === 1 ? full.length / 2 : full.length;
    assert.ok(w.text.length < most, `${w.url.search}: ${w.text.length} bytes against ${full.length}`);
    assert.deepEqual(applyDelta(JSON.parse(await whole(since)), d), JSON.parse(full), `${w.url.search}: the world at ${step}`);
  }
  // A view the page does not hold (another id) is answered whole.
  const other = await (await fetch(`${server.url}/v1/console/runs/${enc}/world?step=${to}&since=${from}&since_id=nope`)).json();
  assert.equal(other.delta_since, undefined);
  assert.equal(other.step, to);

  // The page drew what a fresh load of that step draws.
  const scrubbed = await panelsText(page);
  const note = await page.locator(tid('world-note')).innerText();
  await page.goto('about:blank');
  await page.goto(`${server.url}/#/run/${enc}/step/${to}`);
  await page.locator(`${tid('world-note')}[data-step="${to}"]`).waitFor({ timeout: 30_000 });
  // (The run's step count in the note may come a moment after the world.)
  await until(async () => (await page.locator(tid('world-note')).innerText()) === note, { what: `the note: ${note}` });
  assert.deepEqual(await panelsText(page), scrubbed);
  assert.ok(scrubbed.chats.length > 0, 'chats drawn');
  assert.deepEqual(errors, []);
});
