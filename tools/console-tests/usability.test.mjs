// What a person runs into (issue 40), one browser for all of it: the runs list full
// at 1,000 runs with trials grouped per scenario and a score histogram; AA contrast
// in both themes; the model's words on its decision row and a messages view; search
// inside a run; a fair player (the history so far, a fork's recap); nothing of the
// scenario's answers reachable while a person plays; the timeline its own scroll box
// on a phone, a deep-linked step scrolled to.

import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, jsonLines, launch, oracleRun, runIdOf, startServe, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let tmp;
let browser;
let oracleDir;
let advDir;
let modelDir;
const servers = [];

function run(args) {
  const r = tbsimSync(['run', ...args]);
  if (r.status !== 0) throw new Error(`tbsim run ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
}

/**
 * A model-backed run without a model server: the oracle's run of meeting-only with a
 * `turn` model line before each decision (the first request in full, later ones as
 * `request_delta`s, as the agent records them), replies in Markdown with reasoning.
 */
function modelRun(src, out) {
  mkdirSync(out, { recursive: true });
  for (const f of ['scenario.ron', 'run.json', 'result.json']) linkSync(join(src, f), join(out, f));
  const lines = readFileSync(join(src, 'trajectory.jsonl'), 'utf8').split('\n').filter(Boolean);
  const outLines = [];
  let prev = null;
  for (const l of lines) {
    const v = JSON.parse(l);
    if (v.type === 'decision') {
      const calls = v.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
      const reply = { role: 'assistant', content: `**Step ${v.step}**: I will call \`${v.calls.map((c) => c.name).join(', ') || 'nothing'}\`.\n\n- first point\n- second point\n\n<script>window.__pwned = 1</script>`, tool_calls: calls };
      const response = { choices: [{ message: { ...reply, reasoning_content: `Thinking about step ${v.step}` }, finish_reason: 'tool_calls' }] };
      const line = { type: 'model', step: v.step, t: v.t, purpose: 'turn', model: 'fake-agent' };
      if (!prev) {
        line.request = { model: 'fake-agent', messages: [{ role: 'system', content: 'You are an intern.' }, { role: 'user', content: 'Your first task: see `my_tasks`.' }] };
        prev = line.request.messages;
      } else {
        const added = [prev.reply, ...prev.reply.tool_calls.map((c) => ({ role: 'tool', tool_call_id: c.id, name: c.function.name, content: `result of ${c.function.name} at step ${v.step - 1}` }))];
        line.request_delta = { model: 'fake-agent', keep: prev.length, messages: added };
        prev = prev.concat(added);
      }
      prev.reply = reply;
      line.response = response;
      line.usage = { calls: 1, input_tokens: 100, output_tokens: 40 };
      outLines.push(JSON.stringify(line));
    }
    outLines.push(l);
  }
  writeFileSync(join(out, 'trajectory.jsonl'), `${outLines.join('\n')}\n`);
  return out;
}

before(async () => {
  tmp = tempDir();
  oracleDir = oracleRun('meeting-only', join(tmp, 'oracle'));
  run(['content/scenarios/two-days.ron', '--agent', 'adversary:combined', '--out', join(tmp, 'adv')]);
  advDir = join(tmp, 'adv');
  modelDir = modelRun(oracleDir, join(tmp, 'model'));
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function post(url, path, body) {
  const res = await fetch(url + path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tbsim-Console': '1' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

const entries = (page, type) => page.locator(`${tid('timeline')} > li${type ? `[data-type="${type}"]` : ''}`);
const timelineDone = (page) => until(async () => (await entries(page, 'end').count()) === 1, { what: 'the whole timeline' });

test('1,000 runs: the first paint draws rows, every scenario is there; trials grouped per scenario; a histogram', async () => {
  // 50 batches of 20 trials: one real run's files linked, each with its own result.
  const result = JSON.parse(readFileSync(join(oracleDir, 'result.json'), 'utf8'));
  const big = join(tmp, 'big');
  const scoreOf = (i) => ((i * 37) % 100) / 100;
  for (let i = 0; i < 1000; i++) {
    const d = join(big, `s-${String(Math.floor(i / 20)).padStart(2, '0')}`, 'meeting-only', `trial-${i % 20}`);
    mkdirSync(d, { recursive: true });
    for (const f of ['trajectory.jsonl', 'scenario.ron', 'run.json']) linkSync(join(oracleDir, f), join(d, f));
    writeFileSync(join(d, 'result.json'), JSON.stringify({ ...result, trial: i % 20, checkpoint_score: scoreOf(i), success_rate: scoreOf(i) >= 0.5 ? 1 : 0 }));
  }
  const server = await startView([big], join(tmp, 'forks-big'), [], { timeoutMs: 60_000 });
  servers.push(server);
  const { page, errors } = browser;
  await page.goto(`${server.url}/#/`);
  // The first list with every run: rows are drawn in the same frame.
  await page.locator(`${tid('runs-status')}[data-total="1000"]`).waitFor({ timeout: 30_000 });
  const painted = await page.evaluate(() => new Promise((res) => requestAnimationFrame(() => {
    const rows = document.querySelectorAll('[data-testid="runs-body"] > tr.run');
    const box = document.querySelector('[data-testid="runs-scroll"]').getBoundingClientRect();
    // What is on screen under the table's top rows.
    const y = Math.min(window.innerHeight - 5, box.top + 120);
    const under = document.elementFromPoint(box.left + 40, y);
    res({ rows: rows.length, underRow: !!(under && under.closest('tr.run, tr.group')) });
  })));
  assert.equal(painted.rows, 1000, 'every run has its row at first paint');
  // Rows past the first screenful are laid out a few frames later, all of them.
  await until(async () => page.evaluate(() => document.querySelectorAll('[data-testid="runs-body"] > tr[hidden]').length === 0), { what: 'every row shown' });
  // Drawn whole once shown (the rows past the first screenful start as shells).
  assert.equal(await page.locator(`${tid('runs-body')} > tr.run > td[data-label="Score"]`).count(), 1000, 'every row drawn whole');
  assert.equal(await page.locator(`${tid('runs-body')} > tr.run a[data-testid^="run-link-"]`).count(), 1000);
  // The 50th scenario's batch is in the page at once, not after scrolling.
  await page.locator(tid('group-big/s-49')).waitFor({ state: 'attached', timeout: 1000 });
  await page.locator(tid('run-row-big:s-49:meeting-only:trial-19')).scrollIntoViewIfNeeded();
  assert.ok(await page.locator(tid('run-row-big:s-49:meeting-only:trial-19')).isVisible());
  await until(async () => (await page.locator(tid('runs-status')).getAttribute('data-indexing')) === '0', { timeoutMs: 60_000, what: 'every score read' });
  // Trials of one scenario: mean, spread, pass^1 and pass^k.
  const tr = page.locator(tid('trials-big/s-00:meeting-only'));
  const scores = Array.from({ length: 20 }, (_, i) => scoreOf(i));
  const mean = scores.reduce((a, b) => a + b, 0) / 20;
  assert.ok(Math.abs(Number(await tr.getAttribute('data-mean')) - mean) < 1e-9);
  assert.ok(Number(await tr.getAttribute('data-sd')) > 0);
  const passed = scores.filter((s) => s >= 0.5).length;
  assert.ok(Math.abs(Number(await tr.getAttribute('data-pass1')) - passed / 20) < 1e-9);
  assert.equal(Number(await tr.getAttribute('data-passk')), 0, 'not every trial passed');
  assert.match(await tr.textContent(), /20 trials · mean .* pass\^1 .* pass\^20 0\.00/);
  // The histogram counts every run, in bins of 0.1.
  const counts = (await page.locator(tid('score-histogram')).getAttribute('data-counts')).split(',').map(Number);
  assert.equal(counts.length, 10);
  assert.equal(counts.reduce((a, b) => a + b, 0), 1000);
  assert.equal(counts[0], 100, 'scores 0.00–0.09: ten a batch');
  assert.deepEqual(errors, []);
});

/** axe-core's colour-contrast rule (WCAG AA) over the page as it is now (slow on a
 * long page: used on the small ones). */
async function axeContrast(page, what) {
  // Evaluated, not a <script>: the page's CSP refuses inline scripts.
  if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(readFileSync(AXE, 'utf8'));
  const r = await page.evaluate(async () => {
    const res = await window.axe.run(document, { runOnly: { type: 'rule', values: ['color-contrast'] }, resultTypes: ['violations'] });
    return res.violations.flatMap((v) => v.nodes.map((n) => `${n.target.join(' ')}: ${n.any.map((a) => a.message).join('; ')}`));
  });
  assert.deepEqual(r, [], `contrast below AA on ${what} (axe-core)`);
}

/**
 * The same WCAG AA rule over computed styles, fast enough for a page of thousands
 * of rows: every visible element with text of its own, its colour against the
 * background it is drawn on (the first opaque one up its ancestors, translucent
 * ones composed over it, opacity applied to the text), 4.5:1, or 3:1 for large
 * text (24px, or 18.66px bold).
 */
async function contrast(page, what) {
  const bad = await page.evaluate(() => {
    const parse = (c) => {
      const m = c.match(/rgba?\(([^)]+)\)/);
      if (!m) return null;
      const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
      return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
    };
    const over = (top, under) => ({ r: top.r * top.a + under.r * (1 - top.a), g: top.g * top.a + under.g * (1 - top.a), b: top.b * top.a + under.b * (1 - top.a), a: 1 });
    const lum = (c) => {
      const f = (v) => { const x = v / 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
    };
    const bgOf = (el) => {
      const layers = [];
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c && c.a > 0) {
          layers.push(c);
          if (c.a >= 1) break;
        }
      }
      let bg = { r: 255, g: 255, b: 255, a: 1 };
      if (layers.length && layers[layers.length - 1].a >= 1) bg = layers.pop();
      else bg = parse(getComputedStyle(document.documentElement).backgroundColor) || bg;
      for (let k = layers.length - 1; k >= 0; k--) bg = over(layers[k], bg);
      return bg;
    };
    const out = [];
    for (const el of document.body.querySelectorAll('*')) {
      if (['SCRIPT', 'STYLE', 'OPTION', 'OPTGROUP'].includes(el.tagName)) continue;
      const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
      if (!own) continue;
      const r = el.getBoundingClientRect();
      if (!r.width || !r.height || !el.checkVisibility({ visibilityProperty: true })) continue;
      // Hidden from people, or an inactive control (WCAG 1.4.3 exempts those).
      if (el.closest('.visually-hidden, [aria-hidden="true"], [aria-disabled="true"], :disabled')) continue;
      const cs = getComputedStyle(el);
      let op = 1;
      for (let e = el; e; e = e.parentElement) op *= Number(getComputedStyle(e).opacity);
      const bg = bgOf(el);
      const fg0 = parse(cs.color);
      const fg = over({ ...fg0, a: fg0.a * op }, bg);
      const [x, y] = [lum(fg), lum(bg)].sort((a, b) => b - a);
      const ratio = (x + 0.05) / (y + 0.05);
      const size = parseFloat(cs.fontSize);
      const large = size >= 24 || (size >= 18.66 && Number(cs.fontWeight) >= 700);
      if (ratio < (large ? 3 : 4.5) - 0.01) out.push(`${el.tagName.toLowerCase()}.${el.className} "${el.textContent.trim().slice(0, 40)}": ${ratio.toFixed(2)} (${cs.color} on rgb(${Math.round(bg.r)},${Math.round(bg.g)},${Math.round(bg.b)}))`);
      if (out.length > 20) break;
    }
    return out;
  });
  assert.deepEqual(bad, [], `contrast below AA on ${what}`);
}

test('every view meets WCAG AA contrast in both themes: decision and failed rows, the fork menu, answers', async () => {
  const server = await startView([advDir, oracleDir, modelDir], join(tmp, 'forks-contrast'));
  servers.push(server);
  const { runs } = await api(server.url, '/v1/console/runs');
  const adv = runs.find((r) => r.agent.startsWith('adversary')).id;
  const orc = runs.find((r) => r.id === 'oracle').id;
  const page = await browser.context.newPage();
  try {
    for (const scheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${server.url}/#/`);
      await page.locator(`${tid('runs-status')}[data-total="3"]`).waitFor();
      await contrast(page, `the runs list (${scheme})`);
      await axeContrast(page, `the runs list (${scheme})`);
      // A run with failed results, scrubbed back so later steps are greyed.
      await page.goto(`${server.url}/#/run/${encodeURIComponent(adv)}/step/3`);
      await timelineDone(page);
      assert.ok(await entries(page, 'result').locator('xpath=self::*[contains(@class, "failed")]').count() > 0, 'failed results shown');
      await contrast(page, `a run with failed results (${scheme})`);
      // The fork menu: its select and options.
      const fork = await page.locator(tid('fork-agent')).evaluate((el) => {
        const cs = getComputedStyle(el);
        const o = getComputedStyle(el.options[0]);
        return { fg: cs.color, bg: cs.backgroundColor, ofg: o.color, obg: o.backgroundColor };
      });
      for (const [fg, bg] of [[fork.fg, fork.bg], [fork.ofg, fork.obg]]) {
        assert.ok(ratio(fg, bg) >= 4.5, `fork menu ${fg} on ${bg} (${scheme}): ${ratio(fg, bg).toFixed(2)}`);
      }
      for (const tab of ['files', 'chats', 'calendar', 'tasks']) {
        await page.click(tid(`tab-${tab}`));
        await contrast(page, `the ${tab} tab (${scheme})`);
      }
      // Answers shown on a finished run.
      await page.goto(`${server.url}/#/run/${encodeURIComponent(orc)}`);
      await timelineDone(page);
      await page.check(tid('answers-toggle'));
      await page.locator('.answer').first().waitFor();
      await contrast(page, `answers (${scheme})`);
      // A model run: its replies on decision rows, and the messages view.
      await page.goto(`${server.url}/#/run/model`);
      await timelineDone(page);
      await contrast(page, `a model run (${scheme})`);
      await axeContrast(page, `a model run (${scheme})`);
      await page.click(tid('tab-messages'));
      await page.locator(tid('messages-list')).waitFor();
      await contrast(page, `the messages view (${scheme})`);
      // Compare.
      await page.goto(`${server.url}/#/compare/runs/${encodeURIComponent(orc)},model`);
      await page.locator(tid('compare-view')).or(page.locator('table')).first().waitFor();
      await contrast(page, `compare (${scheme})`);
    }
  } finally {
    await page.close();
  }
});

/** WCAG contrast ratio of two CSS rgb() colours (alpha ignored: opaque here). */
function ratio(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/[\d.]+/g).slice(0, 3).map(Number).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}

test('the model’s words: the reply on its decision row, and the conversation once, rendered and sanitised', async () => {
  const server = await startView([modelDir], join(tmp, 'forks-model'));
  servers.push(server);
  const { page, errors } = browser;
  await page.goto(`${server.url}/#/run/model`);
  await timelineDone(page);
  // Without opening anything: the first decision row shows its reply, Markdown
  // rendered (bold, code, a list), the script tag as text.
  const row = entries(page, 'decision').first();
  const reply = row.locator(tid('decision-reply'));
  assert.ok(await reply.isVisible(), 'the reply text is on the decision row');
  assert.equal(await reply.locator('strong').first().textContent(), 'Step 1');
  assert.equal(await reply.locator('li').count(), 2);
  assert.match(await reply.textContent(), /<script>window.__pwned = 1<\/script>/);
  assert.equal(await page.locator(`${tid('timeline')} script`).count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  // Reasoning collapsed, there to open.
  const why = row.locator(tid('decision-reasoning'));
  assert.equal(await why.evaluate((d) => d.open), false);
  await why.locator('summary').click();
  assert.match(await why.textContent(), /Thinking about step 1/);

  // The messages view: each message once (the resent conversation is not repeated).
  const lines = jsonLines(join(modelDir, 'trajectory.jsonl')).filter((l) => l.type === 'model');
  const n = lines.length;
  await page.click(tid('tab-messages'));
  await page.locator(tid('messages-list')).waitFor();
  const msgs = page.locator(`${tid('messages-list')} > ${tid('message')}`);
  const roles = await msgs.evaluateAll((els) => els.map((e) => `${e.dataset.role}${e.dataset.reply === 'true' ? '*' : ''}`));
  assert.deepEqual(roles.slice(0, 3), ['system', 'user', 'assistant*']);
  assert.equal(roles.filter((r) => r === 'system').length, 1, 'the system prompt once');
  assert.equal(roles.filter((r) => r === 'assistant*').length, n, 'each reply once');
  assert.equal(roles.filter((r) => r === 'assistant').length, 0, 'no resent copy of a reply');
  // Tool calls and results inline; Markdown rendered, sanitised.
  assert.ok(await msgs.nth(2).locator('.tool').count() > 0, 'the reply’s tool calls');
  assert.ok(roles.includes('tool'));
  const firstCalls = jsonLines(join(modelDir, 'trajectory.jsonl')).find((l) => l.type === 'decision').calls.map((c) => c.name).join(', ');
  assert.equal(await msgs.nth(2).locator(`${tid('message-body')} code`).first().textContent(), firstCalls);
  assert.equal(await page.locator(`${tid('messages-view')} script`).count(), 0);
  assert.equal(await msgs.nth(2).locator(`${tid('message-reasoning')}`).evaluate((d) => d.open), false);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(errors, []);
});

test('search inside a run: errors, a tool, a colleague, a task, day 2', async () => {
  const server = await startView([advDir], join(tmp, 'forks-search'));
  servers.push(server);
  const { page, errors } = browser;
  await page.goto(`${server.url}/#/run/adv`);
  await timelineDone(page);
  const raw = jsonLines(join(advDir, 'trajectory.jsonl'));
  const search = page.locator(tid('timeline-search'));
  assert.ok(await search.isVisible(), 'a search box in the run view');
  const count = async () => Number(await page.locator(tid('search-count')).getAttribute('data-count'));

  const failed = raw.filter((l) => l.type === 'result' && !l.result.ok).length;
  assert.ok(failed > 0, 'the adversary makes errors');
  await search.fill('error:');
  await until(async () => (await count()) === failed, { what: `${failed} errors found` });
  // The first match is scrolled to inside the timeline's box, marked.
  const here = page.locator(`${tid('timeline')} > li.search-here`);
  assert.equal(await here.count(), 1);
  assert.equal(await here.getAttribute('data-type'), 'result');
  const inBox = async (li) => li.evaluate((el) => {
    const box = el.closest('.timeline-box').getBoundingClientRect();
    const r = el.getBoundingClientRect();
    return r.top >= box.top - 1 && r.top < box.bottom;
  });
  assert.ok(await inBox(here), 'the match is in view');

  // Day 2, from the jump list.
  const days = raw.filter((l) => l.type === 'event' && l.event.kind === 'day_start').map((l) => l.event.day);
  assert.ok(days.includes(2), 'a two-day run');
  await page.selectOption(tid('timeline-jump'), 'day:2');
  await until(async () => (await count()) === 1, { what: 'day 2 found' });
  assert.ok(await inBox(here));
  const d2 = raw.findIndex((l) => l.type === 'event' && l.event.kind === 'day_start' && l.event.day === 2);
  assert.equal(Number(await here.getAttribute('data-i')), d2);

  // A tool.
  const tool = raw.find((l) => l.type === 'result').result.tool;
  const withTool = raw.filter((l) => (l.type === 'result' && l.result.tool === tool) || (l.type === 'decision' && l.calls.some((c) => c.name === tool))).length;
  await search.fill(`tool:${tool}`);
  await until(async () => (await count()) === withTool, { what: `the ${tool} calls` });
  // ▼ goes to the next match, ▲ back.
  assert.ok(withTool > 1);
  const first = await here.getAttribute('data-i');
  await page.click(tid('search-next'));
  const second = await here.getAttribute('data-i');
  assert.ok(Number(second) > Number(first), 'the next match');
  assert.ok(await inBox(here));
  await page.click(tid('search-prev'));
  assert.equal(await here.getAttribute('data-i'), first);
  // A colleague and a task, offered by the jump list.
  const options = await page.locator(`${tid('timeline-jump')} option`).evaluateAll((os) => os.map((o) => o.value));
  const colleague = options.find((v) => v.startsWith('from:'));
  const task = options.find((v) => v.startsWith('task:'));
  assert.ok(colleague && task, `colleagues and tasks offered: ${options.join(' ')}`);
  for (const v of [colleague, task]) {
    await page.selectOption(tid('timeline-jump'), v);
    await until(async () => (await count()) > 0, { what: `matches for ${v}` });
    assert.equal(await search.inputValue(), v);
  }
  // Free text; a result in the list jumps to its entry.
  await search.fill('Day 2 starts');
  await until(async () => (await count()) >= 1, { what: 'the text found' });
  await page.click(tid('search-next'));
  await page.locator(`${tid('search-result')}[data-i="${d2}"]`).click();
  assert.equal(Number(await here.getAttribute('data-i')), d2);
  assert.deepEqual(errors, []);
});

test('a fair player sees the run so far; a fork gets a recap; nothing of the answers is reachable meanwhile', async () => {
  const out = join(tmp, 'serve');
  const server = await startServe(out);
  servers.push(server);
  const { page, errors } = browser;
  // The oracle's finished run of the scenario, on the same server.
  const { id: orc } = (await post(server.url, '/v1/console/start', { scenario: 'meeting-only', agent: 'oracle' })).body;
  await until(async () => (await api(server.url, `/v1/console/runs/${orc}`)).state === 'finished', { timeoutMs: 60_000, what: 'the oracle to finish' });
  const tl = await api(server.url, `/v1/console/runs/${orc}/timeline?from=0`);
  assert.ok(tl.lines.length > 0, 'open before anyone plays');

  await page.goto(`${server.url}/#/play`);
  await page.fill(tid('play-name'), 'tester');
  await page.selectOption(tid('play-scenario'), 'meeting-only');
  await page.click(tid('play-submit'));
  const id = await until(() => runIdOf(page), { what: 'the run view' });
  await page.locator(`${tid('turn-view')}[data-step="0"]`).waitFor({ timeout: 20_000 });
  const first = await api(server.url, `/v1/console/runs/${id}/turn`);
  const note = (first.observation.notifications || []).find((n) => n.kind === 'task_released');
  assert.ok(note, 'the first turn releases a task');

  // The oracle's run of the same scenario: listed as hidden, every view refused.
  const listed = (await api(server.url, '/v1/console/runs')).runs.find((r) => r.id === orc);
  assert.equal(listed.locked, true);
  for (const view of ['world', 'timeline?from=0', 'file?path=drive/README.md', 'messages', 'stream?from=0']) {
    if (view.startsWith('stream')) continue;
    const res = await fetch(`${server.url}/v1/console/runs/${orc}/${view}`);
    assert.equal(res.status, 403, `${view} of the oracle's run while playing`);
    assert.equal((await res.json()).error.code, 'hidden_while_playing');
  }
  const cmp = await fetch(`${server.url}/v1/console/compare?runs=${orc},${id}`);
  assert.equal(cmp.status, 403);
  // Its page says so and shows no step of it.
  const other = await browser.context.newPage();
  await other.goto(`${server.url}/#/run/${orc}`);
  await other.locator(tid('locked-note')).waitFor({ state: 'visible' });
  await other.waitForTimeout(500);
  assert.equal(await other.locator(`${tid('timeline')} > li`).count(), 0);
  assert.equal(await other.locator(tid('task-list')).count(), 0);

  // Two calls: the page keeps every earlier turn, the first task's notification too.
  for (const [tool, arg] of [['read_file', 'drive/no/such.txt'], ['read_file', 'drive/nothing.txt']]) {
    const step = Number(await page.locator(tid('turn-view')).getAttribute('data-step'));
    await page.selectOption(tid('play-tool'), tool);
    await page.locator(tid(`arg-${tool}-path`)).fill(arg);
    await page.locator(tid('tool-submit')).click();
    await page.locator(`${tid('turn-view')}[data-step="${step + 1}"]`).waitFor();
  }
  await until(async () => (await page.locator(tid('history-turn')).count()) === 2, { what: 'two earlier turns' });
  const hist = await page.locator(tid('play-history')).textContent();
  assert.ok(hist.includes(note.title), 'the first task’s notification is still there');
  assert.ok(hist.includes('drive/no/such.txt') || hist.includes('no/such.txt'), 'the earlier call’s result is still there');

  // Finish: the oracle's run opens again.
  const calls = jsonLines(join(oracleDir, 'trajectory.jsonl')).filter((l) => l.type === 'decision')
    .map((d) => ({ tool_calls: d.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments || '{}') })) }));
  for (const c of calls) {
    const r = await post(server.url, `/v1/console/runs/${id}/act`, c);
    if (r.body.terminated) break;
  }
  await until(async () => (await api(server.url, `/v1/console/runs/${id}`)).state === 'finished', { what: 'the play to end' });
  assert.equal((await fetch(`${server.url}/v1/console/runs/${orc}/timeline?from=0`)).status, 200);
  await other.locator(tid('locked-note')).waitFor({ state: 'hidden', timeout: 10_000 });
  await other.close();
  assert.deepEqual(errors, []);
});

test('on view, a played fork: a recap of steps 1..N, and its parent never opens with answers', async () => {
  const server = await startView([oracleDir], join(tmp, 'forks-play'));
  servers.push(server);
  const { page, errors } = browser;
  const steps = jsonLines(join(oracleDir, 'trajectory.jsonl')).filter((l) => l.type === 'decision');
  const N = Math.min(3, steps.length - 1);
  const r = await post(server.url, '/v1/console/runs/oracle/fork', { step: N, agent: 'human:tester' });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const fork = r.body.id;
  await page.goto(`${server.url}/#/run/${encodeURIComponent(fork)}`);
  await page.locator(tid('play-recap')).waitFor({ state: 'visible', timeout: 20_000 });
  await page.locator(`${tid('play-recap')} > summary`).click();
  const decisions = await page.locator(`${tid('play-recap')} li[data-type="decision"]`).evaluateAll((ls) => ls.map((l) => Number(l.dataset.step)));
  assert.deepEqual(decisions, Array.from({ length: N }, (_, i) => i + 1), 'the recap holds steps 1..N');
  assert.ok(await page.locator(`${tid('play-recap')} li[data-type="result"]`).count() >= N, 'and what they returned');
  // The parent, from the header link: no answers, no steps.
  await page.locator(`${tid('run-sub')} a`).click();
  await page.locator(tid('locked-note')).waitFor({ state: 'visible' });
  assert.equal(await page.locator(tid('answers-wrap')).isVisible(), false);
  const res = await fetch(`${server.url}/v1/console/runs/oracle/world?answers=1`);
  assert.equal(res.status, 403);
  const res2 = await fetch(`${server.url}/v1/console/runs/oracle/timeline?from=0&answers=1`);
  assert.equal(res2.status, 403);
  assert.deepEqual(errors, []);
});

test('on a phone, the timeline is its own scroll box and a deep-linked step is scrolled to', async () => {
  const server = await startView([advDir], join(tmp, 'forks-phone'));
  servers.push(server);
  const phone = await browser.context.newPage();
  try {
    await phone.setViewportSize({ width: 375, height: 700 });
    const steps = jsonLines(join(advDir, 'trajectory.jsonl')).filter((l) => l.type === 'decision').length;
    const step = Math.floor(steps * 0.8);
    await phone.goto(`${server.url}/#/run/adv/step/${step}`);
    await timelineDone(phone);
    const box = await phone.locator('.timeline-box').evaluate((el) => ({ scroll: el.scrollHeight, client: el.clientHeight, vh: window.innerHeight, page: document.scrollingElement.scrollHeight }));
    assert.ok(box.scroll > box.client, 'the timeline scrolls inside its box');
    assert.ok(box.client <= box.vh, 'the box fits the screen');
    const cur = phone.locator(`${tid('timeline')} > li.current`);
    await until(async () => cur.evaluate((el) => {
      const b = el.closest('.timeline-box').getBoundingClientRect();
      const r = el.getBoundingClientRect();
      // Its top inside the box, and on screen (an entry may be taller than the box).
      return r.top >= b.top - 1 && r.top < b.bottom - 20 && r.top >= 0 && r.top < window.innerHeight - 20;
    }), { timeoutMs: 5000, what: `step ${step} in view` });
    assert.equal(await cur.getAttribute('data-step'), String(step));
    // The world's tabs are a screenful or two below, not after the whole timeline.
    const tabsTop = await phone.locator(tid('tab-tasks')).evaluate((el) => el.getBoundingClientRect().top + window.scrollY);
    assert.ok(tabsTop < 4 * box.vh, `the task tabs at ${tabsTop}px`);
  } finally {
    await phone.close();
  }
});
