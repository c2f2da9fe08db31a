// Screenshots of the console for docs/ui/: `node tools/console-tests/screenshots.mjs`.
//
// Starts `tbsim serve` on a free loopback port with runs worth looking at (busy-day
// with the oracle paused partway, a finished meeting-only run, a scenario with an
// image on its drive, a play session of meeting-only) and writes PNGs of each view
// at 1280×800 (and the phone views at 375×700) to docs/ui/. Then, from `tbsim view`:
// two runs compared (the oracle and a fork of it that another agent took over, the
// first divergence marked), two batches compared, a static export opened from disk,
// and, when $TBSIM_FAKE_LLM names a fake model server (`fake-llm
// --from-trajectory <an oracle run of meeting-only>/trajectory.jsonl`), a model
// call's transcript.
//
// Environment: TBSIM_BIN (default: the newer of target/release/tbsim and
// target/debug/tbsim; build one with `cargo build -p tbsim`), CHROMIUM (default
// /usr/bin/chromium), SHOTS_DIR (default docs/ui).

import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

import { ROOT, api, launch, startServe, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

const outDir = process.env.SHOTS_DIR || join(ROOT, 'docs/ui');
mkdirSync(outDir, { recursive: true });
const tmp = tempDir();
const server = await startServe(join(tmp, 'runs'));
const url = server.url;
const runBase = (id) => `/v1/console/runs/${encodeURIComponent(id)}`;

async function start(body) {
  return (await api(url, '/v1/console/start', { method: 'POST', body })).id;
}

async function stepTo(id, n) {
  for (;;) {
    const d = await api(url, runBase(id));
    if (d.steps >= n || d.state === 'finished') return d;
    await api(url, `${runBase(id)}/step`, { method: 'POST' });
    await until(async () => (await api(url, runBase(id))).steps > d.steps, { what: 'a step' });
  }
}

async function act(id, name, args) {
  return api(url, `${runBase(id)}/act`, { method: 'POST', body: { tool_calls: [{ name, arguments: args }] } });
}

const written = [];
async function shot(page, name) {
  const file = join(outDir, `${name}.png`);
  await page.screenshot({ path: file });
  written.push(`${file} (${Math.round(statSync(file).size / 1024)} KB)`);
}

let browser;
try {
  // Runs worth showing.
  const done = await start({ scenario: 'meeting-only', agent: 'oracle' });
  const busy = await start({ scenario: 'busy-day', agent: 'oracle', paused: true, hints: 1 });
  await stepTo(busy, 3);
  await api(url, `${runBase(busy)}/guide`, { method: 'POST', body: { by: 'human:Ana', task: 'task/sync', kind: 'message', text: 'The sync notes are on the shared drive.' } });
  await stepTo(busy, 14);
  const info = await api(url, '/v1/console/info');
  const imageScenario = info.scenarios.find((s) => s === 'traineebench-cl-002');
  let image = null;
  if (imageScenario) {
    image = await start({ scenario: imageScenario, agent: 'oracle', paused: true });
    await stepTo(image, 2);
  }
  const play = await start({ scenario: 'meeting-only', agent: 'human:Ana' });
  await act(play, 'my_tasks', {});
  await act(play, 'wait', { until: '2025-10-08T10:00:00' });
  await until(async () => (await api(url, runBase(done))).state === 'finished', { what: 'meeting-only to finish' });

  browser = await launch({ width: 1280, height: 800 });
  const { page } = browser;

  // Runs list.
  await page.goto(`${url}/#/`);
  await page.locator(tid(`run-row-${busy}`)).waitFor();
  await shot(page, 'runs');

  // Run view: timeline and tasks.
  await page.goto(`${url}/#/run/${encodeURIComponent(busy)}`);
  await page.locator(tid('task-list')).waitFor();
  await until(async () => (await page.locator(`${tid('timeline')} > li`).count()) > 20, { what: 'the timeline' });
  await page.evaluate(() => { const b = document.querySelector('.timeline-box'); b.scrollTop = b.scrollHeight; });
  await shot(page, 'run-tasks');
  const toLayout = () => page.evaluate(() => window.scrollTo(0, document.querySelector('.layout').offsetTop - 8));
  await toLayout();
  await page.evaluate(() => { const b = document.querySelector('.timeline-box'); b.scrollTop = b.scrollHeight * 0.35; });
  await shot(page, 'run-timeline');

  // Chats and calendar.
  await page.click(tid('tab-chats'));
  await toLayout();
  await shot(page, 'run-chats');
  await page.click(tid('tab-calendar'));
  await toLayout();
  await shot(page, 'run-calendar');

  // Files, with an image open when a scenario has one.
  await page.goto(`${url}/#/run/${encodeURIComponent(image || busy)}`);
  await page.locator(tid('task-list')).waitFor();
  await page.click(tid('tab-files'));
  const img = page.locator(`${tid('file-tree')} button[data-kind="image"]`).first();
  if (image && (await img.count())) {
    await img.click();
    await page.locator(tid('file-image')).waitFor();
    await page.waitForFunction(() => { const i = document.querySelector('[data-testid="file-image"]'); return i && i.complete && i.naturalWidth > 0; });
  } else {
    const txt = page.locator(`${tid('file-tree')} button[data-kind="text"]`).first();
    await txt.click();
    await page.locator(tid('file-text')).waitFor();
  }
  await page.locator(tid('file-viewer')).scrollIntoViewIfNeeded();
  await shot(page, 'run-files');

  // Play mode.
  await page.goto(`${url}/#/run/${encodeURIComponent(play)}`);
  await page.locator(`${tid('turn-view')}[data-step="2"]`).waitFor();
  await page.selectOption(tid('play-tool'), 'join_meeting');
  await page.fill(tid('arg-join_meeting-meeting'), 'meeting/standup-sync');
  await shot(page, 'play');

  // Phone width.
  await page.setViewportSize({ width: 375, height: 700 });
  await page.goto(`${url}/#/`);
  await page.locator(tid(`run-row-${busy}`)).waitFor();
  await page.locator(tid('runs-table')).scrollIntoViewIfNeeded();
  await shot(page, 'phone-runs');
  await page.goto(`${url}/#/run/${encodeURIComponent(busy)}`);
  await page.locator(tid('task-list')).waitFor();
  await shot(page, 'phone-run');

  await page.setViewportSize({ width: 1280, height: 800 });
  const must = (r, what) => { if (r.status !== 0) throw new Error(`${what} failed:\n${r.stderr}`); };
  const two = ['content/scenarios/busy-day.ron', 'content/scenarios/meeting-only.ron'];
  must(tbsimSync(['run', ...two, '--agent', 'oracle', '--out', join(tmp, 'oracle')]), 'the oracle batch');
  must(tbsimSync(['run', ...two, '--agent', 'adversary:read-everything', '--out', join(tmp, 'read-everything')]), 'the adversary batch');
  must(tbsimSync(['fork', join(tmp, 'oracle', 'busy-day'), '--at-step', '8', '--agent', 'adversary:read-everything', '--out', join(tmp, 'forked', 'busy-day')]), 'the fork');
  const view = await startView([join(tmp, 'oracle'), join(tmp, 'read-everything'), join(tmp, 'forked')], join(tmp, 'view-forks'));
  try {
    // Compare two runs: the list's selection, then the comparison.
    await page.goto(`${view.url}/#/`);
    await page.locator(tid('compare-select-oracle:busy-day')).check();
    await page.locator(tid('compare-select-forked:busy-day')).check();
    await shot(page, 'compare-select');
    await page.locator(tid('compare-selected')).click();
    await page.locator(tid('divergence-row')).waitFor();
    await page.locator(tid('only-diff')).check();
    await shot(page, 'compare-runs');
    await page.locator(tid('divergence-jump')).click();
    await page.waitForTimeout(200);
    await shot(page, 'compare-divergence');
    // Compare two batches.
    await page.goto(`${view.url}/#/compare/batches/oracle,read-everything`);
    await page.locator(tid('compare-contrasts')).waitFor();
    await shot(page, 'compare-batches');
    // A model call's transcript.
    if (process.env.TBSIM_FAKE_LLM) {
      const cfg = join(tmp, 'api_config.json');
      writeFileSync(cfg, JSON.stringify({ fake: { model_name: 'fake-agent', api_key_env: 'TBSIM_SHOTS_FAKE_KEY', base_url: process.env.TBSIM_FAKE_LLM, proxy_url: '', price_in: 1.0, price_out: 2.0 }, default: 'fake' }));
      must(tbsimSync(['run', '--api-config', cfg, '--agent', 'llm:fake', '--out', join(tmp, 'llm', 'meeting-only'), 'content/scenarios/meeting-only.ron'],
        { env: { ...process.env, TBSIM_SHOTS_FAKE_KEY: 'sk-fake', TBSIM_API_CONFIG: '' } }), 'the model-backed run');
      const llmView = await startView([join(tmp, 'llm')], join(tmp, 'llm-forks'));
      try {
        await page.goto(`${llmView.url}/#/run/${encodeURIComponent('llm:meeting-only')}/step/2`);
        const t = page.locator(tid('transcript')).nth(1);
        await t.waitFor();
        await page.evaluate(() => { for (const d of document.querySelectorAll('[data-testid="transcript"]')) d.open = false; });
        await t.evaluate((d) => { d.open = true; });
        await t.evaluate((d) => { const b = d.closest('.timeline-box'); b.scrollTop = d.closest('li').offsetTop - 8; window.scrollTo(0, b.closest('section').offsetTop - 8); });
        await shot(page, 'run-transcript');
      } finally {
        await llmView.stop();
      }
    }
  } finally {
    await view.stop();
  }
  // A static export opened from disk (no server).
  const site = join(tmp, 'site');
  must(tbsimSync(['view', join(tmp, 'oracle'), join(tmp, 'forked'), '--export', site]), 'the export');
  const index = pathToFileURL(join(site, 'index.html')).href;
  await page.goto(index);
  await page.locator(tid('run-row-oracle:busy-day')).waitFor();
  await shot(page, 'export-runs');
  await page.goto(`${index}#/run/${encodeURIComponent('oracle:busy-day')}/step/20`);
  await until(async () => (await page.locator(tid('world-note')).getAttribute('data-step')) === '20', { what: 'the exported world at step 20' });
  await page.click(tid('tab-files'));
  await page.locator(`${tid('file-tree')} button[data-kind="text"]`).first().click();
  await page.locator(tid('file-text')).waitFor();
  await shot(page, 'export-run');

  console.log(`wrote:\n  ${written.join('\n  ')}`);
} finally {
  if (browser) await browser.close();
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
