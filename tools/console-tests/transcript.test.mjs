// Model transcripts: a model-backed run (the fake OpenAI-compatible server of
// tools/fake-llm, started by the Rust test that runs these and named in
// $TBSIM_FAKE_LLM) shows, per model call, the messages the agent sent and the
// reply, collapsible, with tokens and cost, and the run's totals.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, jsonLines, launch, readJson, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

const LLM = process.env.TBSIM_FAKE_LLM;
let tmp;
let runDir;
let browser;
const servers = [];

before(async () => {
  if (!LLM) return;
  tmp = tempDir();
  const cfg = join(tmp, 'api_config.json');
  writeFileSync(cfg, JSON.stringify({
    fake: { model_name: 'fake-agent', api_key_env: 'TBSIM_TEST_FAKE_KEY', base_url: LLM, proxy_url: '', retry_base_ms: 20, price_in: 1.0, price_out: 2.0 },
    default: 'fake',
  }));
  runDir = join(tmp, 'llm-run');
  const r = tbsimSync(['run', '--api-config', cfg, '--agent', 'llm:fake', '--out', runDir, 'content/scenarios/meeting-only.ron'],
    { env: { ...process.env, TBSIM_TEST_FAKE_KEY: 'sk-fake', TBSIM_API_CONFIG: '' } });
  if (r.status !== 0) throw new Error(`tbsim run (llm:fake) failed (${r.status}):\n${r.stderr}`);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a model-backed run shows each call’s transcript, tokens, cost and the run’s totals', { skip: !LLM && 'needs $TBSIM_FAKE_LLM (set by the Rust test)' }, async () => {
  const server = await startView([runDir], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const id = runs[0].id;
  const raw = jsonLines(join(runDir, 'trajectory.jsonl'));
  const models = raw.filter((l) => l.type === 'model');
  assert.ok(models.length >= 2, 'several model calls');
  assert.ok(models.some((m) => m.request_delta), 'later turns recorded compactly');

  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}`);
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the whole timeline' });
  const entries = page.locator(`${tid('timeline')} > li[data-type="model"]`);
  assert.equal(await entries.count(), models.length);

  // Collapsed until opened.
  const first = entries.nth(0).locator(tid('transcript'));
  assert.equal(await first.evaluate((d) => d.open), false);
  await first.locator('summary').click();
  const roles = await first.locator(tid('transcript-message')).evaluateAll((els) => els.map((e) => e.dataset.role));
  assert.deepEqual(roles, models[0].request.messages.map((m) => m.role));
  assert.equal(roles[0], 'system');
  const sys = models[0].request.messages[0].content;
  const sysText = typeof sys === 'string' ? sys : sys.map((p) => p.text || '').join('');
  assert.ok((await first.textContent()).includes(sysText.slice(0, 60)), 'the system prompt is shown');
  // The reply's tool calls.
  const replyCalls = models[0].response.choices[0].message.tool_calls.map((c) => c.function.name);
  const shown = await first.locator(`${tid('transcript-reply')} .tool`).allTextContents();
  assert.deepEqual(shown, replyCalls);

  // A compact (request_delta) turn is rebuilt in full: it shows every message the
  // agent sent then, tool results included.
  const li = raw.map((l, i) => ({ l, i })).filter(({ l }) => l.type === 'model' && l.request_delta);
  const { l: delta } = li[li.length - 1];
  const k = models.indexOf(delta);
  const last = entries.nth(k).locator(tid('transcript'));
  await last.locator('summary').click();
  const n = await last.locator(tid('transcript-message')).count();
  // Rebuild it here the way the trajectory documents it, and compare counts.
  let base = null;
  let expected = 0;
  for (const m of models) {
    let req = m.request;
    if (!req && m.request_delta) req = { messages: base.messages.slice(0, m.request_delta.keep).concat(m.request_delta.messages || []) };
    if (m.purpose === 'turn') base = req;
    if (m === delta) expected = req.messages.length;
  }
  assert.equal(n, expected);
  assert.ok(expected > delta.request_delta.messages.length, 'more than the delta');
  assert.ok(await last.locator(`${tid('transcript-message')}[data-role="tool"]`).count() > 0, 'tool results as the model saw them');

  // Per-call tokens and cost, and the run's totals.
  const u = models.reduce((a, m) => ({ i: a.i + m.usage.input_tokens, o: a.o + m.usage.output_tokens, c: a.c + (m.usage.cost || 0) }), { i: 0, o: 0, c: 0 });
  const tot = page.locator(tid('run-model-usage'));
  assert.equal(await tot.getAttribute('data-calls'), String(models.length));
  assert.equal(await tot.getAttribute('data-input'), String(u.i));
  assert.equal(await tot.getAttribute('data-output'), String(u.o));
  assert.ok(Math.abs(Number(await tot.getAttribute('data-cost')) - u.c) < 1e-9);
  const result = readJson(join(runDir, 'result.json'));
  assert.equal(result.model.input_tokens, u.i);
  assert.ok((await entries.nth(0).locator(tid('entry-tokens')).textContent()).includes(`${models[0].usage.input_tokens} in`));
  assert.deepEqual(errors, []);
});
