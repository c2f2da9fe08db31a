// The tbsim console: a hash-routed page over the /v1/console API (docs/console.md).
// No build step, no dependencies. Every piece of data reaches the page through
// textContent or attributes, but for one kind: a model's Markdown, which the server
// renders (pulldown-cmark) and sanitises (ammonia) and the page inserts with
// `sanitized()` (fields named `html` / `*_html` only).

'use strict';

// ---------------------------------------------------------------------------
// Small helpers

/** An element: attrs (class, testid, on<event>, properties, attributes), children. */
const PROPS = new Set(['value', 'checked', 'disabled', 'hidden', 'selected', 'multiple', 'required']);

function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'testid') el.dataset.testid = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (PROPS.has(k)) el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  add(el, kids);
  return el;
}

/** Appends kids (nested arrays flattened, null/undefined/false skipped); a list's
 * rows are thousands of calls, so no array is copied on the way. */
function add(el, kids) {
  for (const k of kids) {
    if (k === undefined || k === null || k === false) continue;
    if (Array.isArray(k)) add(el, k);
    else if (k instanceof Node) el.appendChild(k);
    else el.appendChild(document.createTextNode(String(k)));
  }
  return el;
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

const $ = (sel, root = document) => root.querySelector(sel);

/** A block of HTML the server rendered from Markdown and sanitised (messages.rs). */
function sanitized(html, attrs) {
  const el = h('div', Object.assign({ class: 'md-body' }, attrs || {}));
  el.innerHTML = String(html ?? '');
  return el;
}

/**
 * Inline Markdown as DOM nodes (never innerHTML): `code`, **strong**, *em* / _em_;
 * anything else stays text, so untrusted text can only ever be text.
 */
function md(text) {
  const out = [];
  const s = String(text ?? '');
  const re = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|(?<![\w*])\*([^*\s][^*\n]*?)\*(?![\w*])|(?<![\w_])_([^_\s][^_\n]*?)_(?![\w_])/g;
  let last = 0;
  for (const m of s.matchAll(re)) {
    if (m.index > last) out.push(s.slice(last, m.index));
    if (m[1] !== undefined) out.push(h('code', { class: 'md' }, m[1]));
    else if (m[2] !== undefined) out.push(h('strong', {}, m[2]));
    else out.push(h('em', {}, m[3] ?? m[4]));
    last = m.index + m[0].length;
  }
  if (last < s.length) out.push(s.slice(last));
  return out;
}

function announce(msg) {
  const a = $('#announce');
  if (!a) return;
  a.textContent = '';
  // A fresh text node so screen readers hear repeated messages too.
  setTimeout(() => { a.textContent = msg; }, 30);
}

function fmtScore(s) {
  return typeof s === 'number' && isFinite(s) ? s.toFixed(2) : '–';
}

function pretty(v) {
  try {
    return JSON.stringify(v, null, 2);
  } catch {
    return String(v);
  }
}

/** Tool-call arguments as recorded: a JSON string (parsed when it parses). */
function parseArgs(a) {
  if (typeof a !== 'string') return a;
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}

const STATE_LABEL = {
  queued: 'queued',
  running: 'running',
  paused: 'paused',
  waiting_for_model: 'waiting for a model',
  waiting_for_agent: 'waiting for agent',
  finished: 'finished',
  interrupted: 'interrupted',
  failed: 'failed',
};

function stateBadge(state, testid) {
  return h('span', { class: `badge state-${state || 'unknown'}`, testid, 'data-state': state || '' },
    STATE_LABEL[state] || state || 'unknown');
}

function store(key, value) {
  try {
    if (value === undefined) return localStorage.getItem(key) || '';
    localStorage.setItem(key, value);
  } catch {
    /* storage may be off */
  }
  return value;
}

const NAME_KEY = 'tbsim.console.name';

// ---------------------------------------------------------------------------
// The API

const TOKEN = (() => {
  const q = new URLSearchParams(location.search).get('token');
  try {
    if (q) sessionStorage.setItem('tbsim.token', q);
    return q || sessionStorage.getItem('tbsim.token') || '';
  } catch {
    return q || '';
  }
})();

class ApiError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || `http_${status}`;
  }
}

function headers(extra) {
  const hd = Object.assign({}, extra);
  if (TOKEN) hd.Authorization = `Bearer ${TOKEN}`;
  return hd;
}

async function request(path, { method = 'GET', body, signal } = {}) {
  const extra = body !== undefined ? { 'Content-Type': 'application/json' } : {};
  // The server takes console actions only with this header, which another
  // site's page cannot send (its preflight is never granted).
  if (method !== 'GET' && method !== 'HEAD') extra['X-Tbsim-Console'] = '1';
  const opts = { method, headers: headers(extra), signal };
  if (body !== undefined) opts.body = JSON.stringify(body);
  // A static export (export.rs) answers from its data files: no server, no network.
  if (window.TBSIM_STATIC) return window.TBSIM_STATIC.fetch(path);
  let res;
  try {
    res = await fetch(path, opts);
  } catch (e) {
    throw new ApiError(0, 'network', `cannot reach the server (${e.message})`);
  }
  return res;
}

/**
 * GET requests a run's page makes first, started at boot, before
 * `/v1/console/info` answers (the address names the run), so the first paint does
 * not wait for two round trips in a row. Each is taken once, by the same request
 * made by the page; whatever the first route did not take is dropped then.
 * early.js, which the server's page carries inline in its head (an export does
 * not), has started them already: those answers are taken here.
 */
const early = new Map();

function requestEarly(path) {
  const started = window.tbsimEarly && window.tbsimEarly.get(path);
  const p = started
    ? started.then(answer, (e) => { throw new ApiError(0, 'network', `cannot reach the server (${e.message})`); })
    : api(path);
  p.catch(() => {}); // the page's own request shows any error
  early.set(path, p);
}

/** The requests the page of the run in `hash` makes first (see `viewRun`). */
function requestRunEarly(hash) {
  if (window.TBSIM_STATIC) return;
  // The runs list (any address no other view takes): its summaries.
  if (!/^#\/(run|compare|play)/.test(hash)) {
    requestEarly('/v1/console/runs');
    return;
  }
  const m = hash.match(/^#\/run\/([^/?]+)(?:\/step\/(\d+))?/);
  if (!m) return;
  let base;
  try {
    base = `/v1/console/runs/${encodeURIComponent(decodeURIComponent(m[1]))}`;
  } catch {
    return; // not an id: the route says so
  }
  requestEarly(base);
  requestEarly(`${base}/timeline?from=0&limit=${TIMELINE_FIRST_PAGE}`);
  requestEarly(m[2] !== undefined ? `${base}/world?step=${Math.max(0, Number(m[2]))}` : `${base}/world`);
  requestEarly('/v1/tools');
}

async function api(path, opts) {
  if (!opts && early.has(path)) {
    const p = early.get(path);
    early.delete(path);
    return p;
  }
  return answer(await request(path, opts));
}

/** A response's JSON, or its error as an ApiError. */
async function answer(res) {
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!res.ok) {
    const err = data && data.error;
    throw new ApiError(res.status, err && err.code, (err && err.message) || text || res.statusText);
  }
  const id = res.headers && res.headers.get('x-tbsim-world-id');
  if (id && data && typeof data === 'object') worldIds.set(data, id);
  return data;
}

/** The id the server gave each world view it answered (world_delta.rs). */
const worldIds = new WeakMap();

/**
 * The world a delta answer describes, from the world `held` it was asked against:
 * unchanged keys taken from it, changed ones as sent, and of a changed list the
 * items that are unchanged taken from it by index (world_delta.rs).
 */
function applyWorldDelta(held, d) {
  const w = {};
  for (const k of d.same) w[k] = held[k];
  for (const [k, v] of Object.entries(d.set)) w[k] = v;
  for (const [k, a] of Object.entries(d.arrays)) {
    let j = 0;
    w[k] = a.old.map((i) => (i < 0 ? a.new[j++] : held[k][i]));
  }
  if (worldIds.has(d)) worldIds.set(w, worldIds.get(d));
  return w;
}

function errorText(e) {
  if (e instanceof ApiError) return `${e.code}: ${e.message}`;
  return String(e && e.message ? e.message : e);
}

/**
 * Server-sent events with a polling fallback. `handlers` maps event names to
 * functions; `poll` is called every `every` ms when the stream fails (or when a
 * token is in use: EventSource cannot send one). Returns a stop function.
 */
function subscribe(url, handlers, poll, every = 1500) {
  let es = null;
  let timer = null;
  let stopped = false;
  // A static export never changes: one look is all there is.
  if (window.TBSIM_STATIC) {
    poll().catch(() => {});
    return () => {};
  }
  const startPolling = () => {
    if (timer || stopped) return;
    const tick = async () => {
      if (stopped) return;
      try {
        await poll();
      } catch {
        /* try again at the next tick */
      }
    };
    tick();
    timer = setInterval(tick, every);
  };
  if (TOKEN || typeof EventSource === 'undefined') {
    startPolling();
  } else {
    es = new EventSource(url);
    for (const [name, fn] of Object.entries(handlers)) {
      es.addEventListener(name, (ev) => {
        let data;
        try {
          data = JSON.parse(ev.data);
        } catch {
          return;
        }
        fn(data);
      });
    }
    es.onerror = () => {
      if (stopped) return;
      es.close();
      es = null;
      if (handlers.onfail) handlers.onfail();
      else startPolling();
    };
  }
  return () => {
    stopped = true;
    if (es) es.close();
    if (timer) clearInterval(timer);
  };
}

// ---------------------------------------------------------------------------
// Routing

let info = null;
let cleanups = [];

function onCleanup(fn) {
  cleanups.push(fn);
}

function route() {
  for (const f of cleanups) {
    try {
      f();
    } catch {
      /* ignore */
    }
  }
  cleanups = [];
  const hash = location.hash || '#/';
  const main = $('#main');
  clear(main);
  window.scrollTo(0, 0);
  const m = hash.match(/^#\/run\/([^/?]+)(?:\/step\/(\d+))?/);
  const cmp = hash.match(/^#\/compare\/(runs|batches)\/([^/?]+)/);
  if (cmp && window.tbsimCompare) window.tbsimCompare.view(main, cmp[1], cmp[2].split(',').map(decodeURIComponent));
  else if (m) viewRun(main, decodeURIComponent(m[1]), m[2] !== undefined ? Number(m[2]) : null);
  else if (hash.startsWith('#/play')) viewPlay(main);
  else viewRuns(main);
  // Only the first route may take an early answer: any later one asks anew.
  early.clear();
}

function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

async function boot() {
  // The console's mode: asked by early.js with the rest, when the page has it.
  if (window.tbsimEarly && window.tbsimEarly.has('/v1/console/info')) requestEarly('/v1/console/info');
  requestRunEarly(location.hash || '');
  try {
    info = await api('/v1/console/info');
  } catch (e) {
    const main = clear($('#main'));
    main.append(h('p', { class: 'error', role: 'alert', testid: 'boot-error' }, `Cannot load the console: ${errorText(e)}`));
    if (e instanceof ApiError && e.status === 401) main.append(loginForm());
    return;
  }
  const mode = $('[data-testid="mode"]');
  mode.textContent = `${info.static ? 'static export' : info.mode}${info.read_only ? ' · read-only' : ''} · tbsim ${info.version || ''}`;
  if (info.can_start) $('[data-testid="nav-play"]').hidden = false;
  window.addEventListener('hashchange', route);
  route();
}

/** The server wants a token: `/login` sets the console's cookie and comes back. */
function loginForm() {
  const token = h('input', { id: 'login-token', testid: 'login-token', type: 'password', autocomplete: 'current-password', required: true });
  const form = h('form', { class: 'card', testid: 'login-form', 'aria-labelledby': 'login-h' },
    h('h2', { id: 'login-h' }, 'Log in'),
    h('p', { class: 'muted small' }, 'This console was started with a token (--token or --ui-token).'),
    field('Token', token),
    h('button', { type: 'submit', testid: 'login-submit' }, 'Log in'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.href = `/login?token=${encodeURIComponent(token.value)}`;
  });
  setTimeout(() => token.focus(), 0);
  return form;
}

// ---------------------------------------------------------------------------
// Runs list: grouped by batch, sorted, filtered; its state lives in the address
// (`#/?sort=score&dir=desc&agent=oracle&q=…`), and a long list draws only the rows
// in view.

/** Natural order: `trial-2` before `trial-10`. */
const NATURAL = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** The list's columns: label, sort key, how a run sorts by it. */
const RUN_COLUMNS = [
  { key: 'id', label: 'Run', get: (r) => r.id, text: true },
  { key: 'scenario', label: 'Scenario', get: (r) => r.scenario, text: true },
  { key: 'agent', label: 'Agent', get: (r) => r.agent, text: true },
  // The clock reads "Thu 2025-10-09 11:37": it sorts by its date and time.
  { key: 'time', label: 'Clock', get: (r) => (r.time || '').replace(/^[A-Za-z]+ /, ''), text: true },
  // A row still being read (`indexing`) has no steps or score yet: it sorts last.
  { key: 'step', label: 'Steps', get: (r) => (r.indexing ? null : r.step ?? 0) },
  { key: 'score', label: 'Score', get: (r) => (r.indexing ? null : r.score) },
  { key: 'success', label: 'Success', get: (r) => r.success_rate },
  { key: 'tokens', label: 'Tokens', get: (r) => runTokens(r) },
  { key: 'state', label: 'State', get: (r) => r.state, text: true },
];

/** The filters the address may hold, beside `sort`, `dir` and `group`. */
const RUN_FILTERS = ['q', 'agent', 'suite', 'family', 'state', 'tag', 'min', 'max'];

function runTokens(r) {
  return r.model ? (r.model.input_tokens || 0) + (r.model.output_tokens || 0) : null;
}

/** The list's state from the address (`#/?…`). */
function listState() {
  const i = location.hash.indexOf('?');
  const p = new URLSearchParams(i >= 0 ? location.hash.slice(i + 1) : '');
  const s = { sort: p.get('sort') || 'id', dir: p.get('dir') === 'desc' ? 'desc' : 'asc', group: p.get('group') !== 'none' };
  if (!RUN_COLUMNS.some((c) => c.key === s.sort)) s.sort = 'id';
  for (const f of RUN_FILTERS) s[f] = p.get(f) || '';
  return s;
}

/** The address of a list state: only what differs from the default is written. */
function listHash(s) {
  const p = new URLSearchParams();
  if (s.sort !== 'id') p.set('sort', s.sort);
  if (s.dir !== 'asc') p.set('dir', s.dir);
  if (!s.group) p.set('group', 'none');
  for (const f of RUN_FILTERS) if (s[f] !== '') p.set(f, s[f]);
  const q = p.toString();
  return q ? `#/?${q}` : '#/';
}

function runMatches(r, s) {
  if (s.agent && r.agent !== s.agent) return false;
  if (s.suite && (r.suite || '') !== s.suite) return false;
  if (s.family && !(r.families || []).includes(s.family)) return false;
  if (s.state && r.state !== s.state) return false;
  if (s.tag && (r.tag || '') !== s.tag) return false;
  const min = s.min === '' ? NaN : Number(s.min);
  const max = s.max === '' ? NaN : Number(s.max);
  // A score not read yet matches no score range.
  if (!Number.isNaN(min) && (r.indexing || !(r.score >= min))) return false;
  if (!Number.isNaN(max) && (r.indexing || !(r.score <= max))) return false;
  if (s.q) {
    const hay = [r.id, r.scenario, r.agent, r.batch, r.suite, r.tag, r.state, ...(r.families || [])]
      .filter(Boolean).join(' ').toLowerCase();
    // Every word must appear somewhere.
    for (const w of s.q.toLowerCase().split(/\s+/).filter(Boolean)) if (!hay.includes(w)) return false;
  }
  return true;
}

/** Compares by column `key`: runs without a value come last either way. */
function runComparator(key, dir) {
  const col = RUN_COLUMNS.find((c) => c.key === key) || RUN_COLUMNS[0];
  const sign = dir === 'desc' ? -1 : 1;
  return (a, b) => {
    const x = col.get(a);
    const y = col.get(b);
    const nx = x === null || x === undefined || x === '';
    const ny = y === null || y === undefined || y === '';
    if (nx || ny) return nx === ny ? NATURAL.compare(a.id, b.id) : nx ? 1 : -1;
    const o = col.text ? NATURAL.compare(String(x), String(y)) : x - y;
    return o !== 0 ? sign * o : NATURAL.compare(a.id, b.id);
  };
}

/** A batch's aggregate over the runs shown of it. */
function batchAggregate(runs) {
  const n = runs.length;
  // Over the runs whose score is read (the rest are being read: `indexing`).
  const read = runs.filter((r) => !r.indexing);
  const score = read.length ? read.reduce((t, r) => t + (Number(r.score) || 0), 0) / read.length : null;
  const rated = runs.filter((r) => typeof r.success_rate === 'number');
  const success = rated.length ? rated.reduce((t, r) => t + r.success_rate, 0) / rated.length : null;
  const used = runs.filter((r) => r.model);
  const tokens = used.length ? used.reduce((t, r) => t + runTokens(r), 0) : null;
  const costed = used.filter((r) => typeof r.model.cost === 'number');
  const cost = costed.length ? costed.reduce((t, r) => t + r.model.cost, 0) : null;
  const finished = runs.filter((r) => r.state === 'finished').length;
  return { n, score, success, tokens, cost, finished };
}

function fmtPct(x) {
  return typeof x === 'number' && isFinite(x) ? `${Math.round(x * 100)}%` : '–';
}

function fmtCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en') : '–';
}

/** A name a person can read: a session's 32-hex id or a batch's `job-<n>` says
 * nothing, so those read as scenario · agent (· trial) and a short id. */
function runLabel(r) {
  if (!r) return '';
  const hex = /^[0-9a-f]{32}$/.test(r.id);
  const job = /^job-\d+$/.test(r.id);
  if (!hex && !job) return r.id;
  const parts = [r.scenario, r.agent];
  if (typeof r.trial === 'number') parts.push(`trial ${r.trial}`);
  parts.push(hex ? r.id.slice(0, 6) : r.id);
  return parts.filter(Boolean).join(' · ');
}

/** A run's row, cloned from one built with `h` (the same elements, classes and
 * labels) and filled in: a list of 1,000 runs makes 25,000 elements, which cost its
 * first paint about twice as much one `createElement` and `setAttribute` at a time.
 * Text still goes in as text only. */
let ROW_PROTO = null;
function runRowFast(r) {
  const withCompare = !!window.tbsimCompare;
  if (!ROW_PROTO || ROW_PROTO.withCompare !== withCompare) {
    const td = (label, attrs, ...kids) => h('td', { 'data-label': label, ...attrs }, ...kids);
    const tr = h('tr', { class: 'run' },
      withCompare ? h('td', { 'data-label': 'Compare', class: 'compare-cell' }, h('input', { type: 'checkbox' })) : null,
      td('Run', {}, h('a', {})),
      td('Scenario', {}),
      td('Agent', {}),
      td('Clock', {}),
      td('Steps', { class: 'num', testid: 'run-row-step' }),
      td('Score', { class: 'num', testid: 'run-row-score' }),
      td('Success', { class: 'num', testid: 'run-row-success' }),
      td('Tokens', { class: 'num', testid: 'run-row-tokens' }),
      td('State', {}));
    ROW_PROTO = { tr, withCompare };
  }
  const tr = ROW_PROTO.tr.cloneNode(true);
  tr.dataset.testid = `run-row-${r.id}`;
  if (r.state !== undefined && r.state !== null) tr.dataset.state = r.state;
  const c = tr.children;
  let i = 0;
  if (withCompare) window.tbsimCompare.fillSelectCell(c[i++].firstChild, r);
  const small = (cls, text, testid) => {
    const s = document.createElement('span');
    s.className = cls;
    if (testid) s.dataset.testid = testid;
    s.textContent = text;
    return s;
  };
  const runTd = c[i++];
  const a = runTd.firstChild;
  a.setAttribute('href', `#/run/${encodeURIComponent(r.id)}`);
  a.dataset.testid = `run-link-${r.id}`;
  a.title = r.id;
  a.textContent = runLabel(r);
  if (r.tag) runTd.appendChild(small('tag small', r.tag, 'run-row-tag'));
  if (r.fork) runTd.appendChild(small('muted small', ` fork of ${r.fork.parent} @ ${r.fork.step}`));
  const scen = c[i++];
  scen.textContent = r.scenario ?? '';
  if (r.suite) scen.appendChild(small('muted small', ` ${r.suite}`));
  c[i++].textContent = r.agent ?? '';
  const clock = c[i++];
  clock.textContent = r.time || '–';
  clock.appendChild(small('muted small', ` day ${r.day ?? '–'}/${r.days ?? '–'}`));
  c[i++].textContent = String(r.step ?? 0);
  const score = c[i++];
  if (r.score !== undefined && r.score !== null) score.dataset.score = r.score;
  score.textContent = fmtScore(r.score);
  c[i++].textContent = fmtPct(r.success_rate);
  const tokens = runTokens(r);
  const tok = c[i++];
  tok.textContent = tokens === null ? '–' : fmtCount(tokens);
  if (r.model && typeof r.model.cost === 'number') tok.appendChild(small('muted small', ` ${fmtCost(r.model.cost)}`));
  add(c[i++], [stateBadge(r.state, 'run-row-state'),
    r.locked ? h('span', { class: 'badge', testid: 'run-row-locked', title: 'someone is playing this scenario: hidden until the play ends' }, ' hidden while played') : null,
    r.end_reason && r.end_reason !== r.state ? h('span', { class: 'muted small', testid: 'run-row-end' }, ` ${r.end_reason}`) : null]);
  return tr;
}

function runRow(r) {
  if (!r.indexing) return runRowFast(r);
  const link = h('a', { href: `#/run/${encodeURIComponent(r.id)}`, testid: `run-link-${r.id}`, title: r.id }, runLabel(r));
  return pendingRow(r, link);
}

/** A run whose summary is still being read: what is known, and "…" for the rest. */
function pendingRow(r, link) {
  const later = (label, testid) => h('td', { 'data-label': label, class: 'num muted', testid, title: 'being read' }, '…');
  return h('tr', { testid: `run-row-${r.id}`, 'data-state': r.state, 'data-indexing': 'true', class: 'run' },
    window.tbsimCompare ? window.tbsimCompare.selectCell(r) : null,
    h('td', { 'data-label': 'Run' }, link, r.tag ? h('span', { class: 'tag small', testid: 'run-row-tag' }, r.tag) : null),
    h('td', { 'data-label': 'Scenario' }, r.scenario, r.suite ? h('span', { class: 'muted small' }, ` ${r.suite}`) : null),
    h('td', { 'data-label': 'Agent' }, r.agent),
    h('td', { 'data-label': 'Clock', class: 'muted', title: 'being read' }, '…'),
    later('Steps', 'run-row-step'),
    later('Score', 'run-row-score'),
    later('Success', 'run-row-success'),
    later('Tokens', 'run-row-tokens'),
    h('td', { 'data-label': 'State' }, stateBadge(r.state, 'run-row-state')));
}

function groupRow(name, a) {
  const parts = [`${a.n} run${a.n === 1 ? '' : 's'}`, `mean score ${fmtScore(a.score)}`, `success ${fmtPct(a.success)}`];
  if (a.tokens !== null) parts.push(`${fmtCount(a.tokens)} tokens`);
  if (a.cost !== null) parts.push(`cost ${fmtCost(a.cost)}`);
  return h('tr', {
    class: 'group', testid: `group-${name}`, 'data-n': a.n, 'data-score': a.score ?? '', 'data-success': a.success ?? '',
    'data-tokens': a.tokens ?? '', 'data-cost': a.cost ?? '',
  }, h('th', { colspan: RUN_COLUMNS.length + (window.tbsimCompare ? 1 : 0), scope: 'rowgroup' }, h('span', { class: 'group-name' }, name || '(no batch)'),
    h('span', { class: 'muted small' }, ` · ${parts.join(' · ')}`)));
}

/** Above this many rows, only those in view are drawn (below it every row is in the
 * page: found by the browser's own search, drawn at first paint). */
const VIRTUAL_FROM = 5000;
/** Rows laid out for a list's first paint (a screenful: 7 rows show at 1280×800,
 * 21 at 1920×1200); the rest follow, ROWS_A_FRAME at a time, from the next frame. */
const FIRST_ROWS = 30;
const ROWS_A_FRAME = 150;

/** Trials of one scenario in a batch: n, mean, spread, pass^1 and pass^k (k = n:
 * every trial succeeded; a trial succeeds when all its tasks do). */
function trialAggregate(runs) {
  const read = runs.filter((r) => !r.indexing && typeof r.score === 'number');
  const n = read.length;
  const mean = n ? read.reduce((t, r) => t + r.score, 0) / n : null;
  const sd = n > 1 ? Math.sqrt(read.reduce((t, r) => t + (r.score - mean) ** 2, 0) / (n - 1)) : null;
  const min = n ? Math.min(...read.map((r) => r.score)) : null;
  const max = n ? Math.max(...read.map((r) => r.score)) : null;
  const rated = runs.filter((r) => typeof r.success_rate === 'number');
  const c = rated.filter((r) => r.success_rate >= 1).length;
  const k = rated.length;
  return { n: runs.length, mean, sd, min, max, pass1: k ? c / k : null, passK: k ? (c === k ? 1 : 0) : null, k };
}

function trialRow(batch, scenario, a) {
  const parts = [`${a.n} trial${a.n === 1 ? '' : 's'}`, `mean ${fmtScore(a.mean)}`];
  if (a.sd !== null) parts.push(`sd ${fmtScore(a.sd)}`);
  if (a.min !== null) parts.push(`range ${fmtScore(a.min)}–${fmtScore(a.max)}`);
  if (a.pass1 !== null) parts.push(`pass^1 ${fmtScore(a.pass1)}`, `pass^${a.k} ${fmtScore(a.passK)}`);
  return h('tr', {
    class: 'trials', testid: `trials-${batch}:${scenario}`, 'data-n': a.n, 'data-mean': a.mean ?? '', 'data-sd': a.sd ?? '',
    'data-pass1': a.pass1 ?? '', 'data-passk': a.passK ?? '',
  }, h('th', { colspan: RUN_COLUMNS.length + (window.tbsimCompare ? 1 : 0), scope: 'rowgroup' },
    h('span', { class: 'group-name' }, scenario), h('span', { class: 'muted small' }, ` · ${parts.join(' · ')}`)));
}

/** A histogram of the scores shown: ten bins over 0..1 (the last takes 1.0). */
function scoreHistogram(runs) {
  const counts = new Array(10).fill(0);
  for (const r of runs) {
    if (r.indexing || typeof r.score !== 'number') continue;
    counts[Math.min(9, Math.max(0, Math.floor(r.score * 10)))] += 1;
  }
  const top = Math.max(1, ...counts);
  const bars = counts.map((c, i) => {
    const bar = h('span', { class: 'hist-bar', title: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}: ${c}` });
    // Through the style object: the page's CSP refuses style attributes.
    bar.style.height = `${Math.round((c / top) * 100)}%`;
    return h('div', { class: 'hist-col', testid: 'hist-col', 'data-count': c },
      h('div', { class: 'hist-track' }, bar), h('span', { class: 'hist-n small' }, String(c)), h('span', { class: 'hist-x small muted' }, (i / 10).toFixed(1)));
  });
  return h('figure', { class: 'histogram', testid: 'score-histogram', 'data-counts': counts.join(',') },
    h('figcaption', { class: 'small muted' }, 'Scores of the runs shown (bins of 0.1)'), h('div', { class: 'hist-cols' }, bars));
}

function viewRuns(main) {
  main.append(h('h1', {}, 'Runs'));
  if (info.can_start) main.append(startForms());
  const tbody = h('tbody', { testid: 'runs-body' });
  const empty = h('p', { class: 'muted', testid: 'runs-empty', hidden: true }, 'No runs yet.');
  const status = h('p', { class: 'muted small', testid: 'runs-status', 'aria-live': 'polite' }, 'Connecting…');
  // Hold or release every run a built-in agent drives (and, in a batch, the jobs
  // still to start).
  const holdStatus = h('span', { class: 'muted small', testid: 'hold-status', 'aria-live': 'polite' });
  const hold = (what) => async () => {
    try {
      const r = await api(`/v1/console/${what}`, { method: 'POST' });
      holdStatus.textContent = `${what === 'pause-all' ? 'Paused' : 'Resumed'} ${r.changed.length} run${r.changed.length === 1 ? '' : 's'}`;
    } catch (e) {
      holdStatus.textContent = errorText(e);
    }
  };
  const compareBar = window.tbsimCompare ? window.tbsimCompare.bar() : null;
  if (compareBar) onCleanup(compareBar.dispose);
  const holdBar = h('div', { class: 'controls', role: 'group', 'aria-label': 'All runs', hidden: info.read_only },
    h('button', { type: 'button', testid: 'pause-all', onclick: hold('pause-all') }, 'Pause all'),
    h('button', { type: 'button', testid: 'resume-all', onclick: hold('resume-all') }, 'Resume all'),
    holdStatus);

  const s = listState();
  let all = [];
  // Filters: the address is rewritten in place (no history entry, no re-route).
  const setState = (k, v) => {
    s[k] = v;
    const hash = listHash(s);
    if (location.hash !== hash && !(hash === '#/' && location.hash === '')) history.replaceState(null, '', hash);
    draw();
  };
  const text = (key, attrs) => {
    const el = h('input', { testid: `runs-filter-${key}`, value: s[key], ...attrs });
    el.addEventListener('input', () => setState(key, el.value.trim()));
    return el;
  };
  const selects = {};
  const choice = (key) => {
    const el = h('select', { testid: `runs-filter-${key}` });
    el.addEventListener('change', () => setState(key, el.value));
    selects[key] = el;
    return el;
  };
  const groupBox = h('input', { type: 'checkbox', testid: 'runs-group', checked: s.group });
  groupBox.addEventListener('change', () => setState('group', groupBox.checked));
  const filters = h('form', { class: 'filters', testid: 'runs-filters', role: 'search', 'aria-label': 'Filter runs', onsubmit: (ev) => ev.preventDefault() },
    field('Search', text('q', { type: 'search', placeholder: 'run, scenario, agent, batch, tag…' })),
    field('Agent', choice('agent')),
    field('Suite', choice('suite')),
    field('Family', choice('family')),
    field('State', choice('state')),
    field('Tag', choice('tag')),
    field('Score ≥', text('min', { type: 'number', min: '0', max: '1', step: '0.05', inputmode: 'decimal' })),
    field('Score ≤', text('max', { type: 'number', min: '0', max: '1', step: '0.05', inputmode: 'decimal' })),
    h('label', { class: 'check' }, groupBox, ' Group by batch'),
    h('button', { type: 'button', testid: 'runs-filter-clear', onclick: () => { for (const f of RUN_FILTERS) s[f] = ''; go(listHash(s)); } }, 'Clear'));

  // Column headers sort; a second click reverses.
  const headRow = h('tr', {}, window.tbsimCompare ? h('th', { scope: 'col' }, 'Compare') : null, RUN_COLUMNS.map((c) => h('th', { scope: 'col', 'data-key': c.key },
    h('button', { type: 'button', class: 'sort', testid: `sort-${c.key}`, onclick: () => {
      if (s.sort === c.key) setState('dir', s.dir === 'asc' ? 'desc' : 'asc');
      else {
        s.dir = c.text ? 'asc' : 'desc';
        setState('sort', c.key);
      }
    } }, c.label))));
  const table = h('table', { class: 'runs', testid: 'runs-table' }, h('thead', {}, headRow), tbody);
  const scroller = h('div', { class: 'runs-scroll', testid: 'runs-scroll' }, table);
  const histBox = h('div', { class: 'hist-box', testid: 'hist-box' });
  main.append(
    h('section', { 'aria-labelledby': 'runs-h' },
      h('h2', { id: 'runs-h' }, 'All runs'),
      holdBar,
      filters,
      compareBar,
      status,
      histBox,
      scroller,
      empty));

  /** Options of a select from the values the runs have; the chosen one stays. */
  const fillSelect = (key, values) => {
    const el = selects[key];
    const want = [...new Set(values.filter(Boolean))].sort(NATURAL.compare);
    if (s[key] && !want.includes(s[key])) want.push(s[key]);
    const sig = want.join('\n');
    if (el.dataset.sig !== sig) {
      clear(el).append(h('option', { value: '' }, 'any'), ...want.map((v) => h('option', { value: v }, key === 'state' ? (STATE_LABEL[v] || v) : v)));
      el.dataset.sig = sig;
    }
    el.value = s[key];
    el.closest('.field').hidden = want.length === 0 && key !== 'agent' && key !== 'state';
  };

  // What the table shows: group headers and runs, drawn whole or by window.
  let items = [];
  let heights = null;
  let rowH = 0;
  let groupH = 0;
  const draw = () => {
    for (const c of headRow.children) {
      const on = c.dataset.key === s.sort;
      c.setAttribute('aria-sort', on ? (s.dir === 'asc' ? 'ascending' : 'descending') : 'none');
    }
    const shown = all.filter((r) => runMatches(r, s)).sort(runComparator(s.sort, s.dir));
    items = [];
    if (s.group && shown.some((r) => r.batch)) {
      const groups = new Map();
      for (const r of shown) {
        const b = r.batch || '';
        if (!groups.has(b)) groups.set(b, []);
        groups.get(b).push(r);
      }
      for (const b of [...groups.keys()].sort(NATURAL.compare)) {
        const runs = groups.get(b);
        items.push({ group: b, agg: batchAggregate(runs) });
        // Trials: runs of one scenario more than once in a batch get a row of their own.
        const byScenario = new Map();
        for (const r of runs) {
          if (!byScenario.has(r.scenario)) byScenario.set(r.scenario, []);
          byScenario.get(r.scenario).push(r);
        }
        if ([...byScenario.values()].some((v) => v.length > 1)) {
          // In the order the sort put their first runs.
          for (const sc of byScenario.keys()) {
            items.push({ trials: sc, batch: b, agg: trialAggregate(byScenario.get(sc)) });
            for (const r of byScenario.get(sc)) items.push({ run: r });
          }
        } else {
          for (const r of runs) items.push({ run: r });
        }
      }
    } else {
      for (const r of shown) items.push({ run: r });
    }
    const virtual = items.length > VIRTUAL_FROM;
    const scored = shown.filter((r) => !r.indexing && typeof r.score === 'number').length;
    const hist = scored >= 2 ? scoreHistogram(shown) : null;
    if ((hist ? hist.dataset.counts : '') !== (histBox.dataset.counts || '')) {
      clear(histBox);
      if (hist) histBox.append(hist);
      histBox.dataset.counts = hist ? hist.dataset.counts : '';
    }
    scroller.classList.toggle('virtual', virtual);
    table.classList.toggle('virtual', virtual);
    heights = null;
    const reading = all.filter((r) => r.indexing).length;
    status.textContent = (shown.length === all.length
      ? `${all.length} run${all.length === 1 ? '' : 's'}`
      : `${shown.length} of ${all.length} runs`) + (reading ? ` · reading ${reading} more…` : '');
    status.dataset.indexing = String(reading);
    status.dataset.shown = String(shown.length);
    status.dataset.total = String(all.length);
    empty.hidden = all.length > 0;
    empty.textContent = 'No runs yet.';
    if (all.length > 0 && shown.length === 0) {
      empty.hidden = false;
      empty.textContent = 'No run matches the filters.';
    }
    cancelAnimationFrame(showing);
    showing = 0;
    if (!virtual) {
      // Every row is in the page at once (counted, found by id), but the first
      // list lays out only a screenful for its first paint: the other rows come out
      // of `hidden` a few hundred a frame (a table of 1,000 rows took the browser
      // most of a second to style and lay out in one go). A list redrawn keeps as
      // many rows shown as it had (no row a reader looks at blinks).
      // The rows not laid out yet are run rows' shells (the row, its id and its
      // link), drawn whole as they come out of `hidden`: building a thousand whole
      // rows was most of the first paint's script.
      const keep = Math.max(FIRST_ROWS, laidOut);
      clear(tbody);
      const frag = document.createDocumentFragment();
      items.forEach((it, k) => {
        const tr = k < keep || !it.run ? itemRow(it) : shellRow(it);
        if (k >= keep) tr.hidden = true;
        frag.append(tr);
      });
      tbody.append(frag);
      laidOut = Math.min(keep, items.length);
      // The rest start a frame later: the first frame lays out only the rows drawn
      // whole (in the same frame, 150 more rows doubled its style and layout).
      if (items.length > keep) showing = requestAnimationFrame(() => showRest(keep));
      return;
    }
    drawWindow();
  };
  let showing = 0;
  let laidOut = 0;
  const showRest = (from) => {
    showing = requestAnimationFrame(() => {
      showing = 0;
      const rows = tbody.children;
      const to = Math.min(rows.length, from + ROWS_A_FRAME);
      for (let k = from; k < to; k++) {
        const row = rows[k];
        if (row.tbShell) row.replaceWith(itemRow(row.tbShell));
        else row.hidden = false;
      }
      laidOut = to;
      if (to < rows.length) showRest(to);
    });
  };
  onCleanup(() => cancelAnimationFrame(showing));

  /** A run's row before it is drawn: found by its id and link, not laid out. */
  const shellRow = (it) => {
    const r = it.run;
    const tr = document.createElement('tr');
    tr.className = 'run';
    tr.dataset.testid = `run-row-${r.id}`;
    if (r.state !== undefined && r.state !== null) tr.dataset.state = r.state;
    const a = document.createElement('a');
    a.setAttribute('href', `#/run/${encodeURIComponent(r.id)}`);
    a.dataset.testid = `run-link-${r.id}`;
    a.title = r.id;
    a.textContent = runLabel(r);
    tr.appendChild(document.createElement('td')).appendChild(a);
    tr.tbShell = it;
    return tr;
  };
  const itemRow = (it) => (it.run ? runRow(it.run) : it.trials !== undefined ? trialRow(it.batch, it.trials, it.agg) : groupRow(it.group, it.agg));
  /** Draws the rows in view (and a screenful either side) between two spacers. */
  const drawWindow = () => {
    if (!items.length) return;
    if (!heights) {
      // Rows are one line each (see .virtual in app.css): measure one of each kind.
      clear(tbody);
      const sampleRun = items.find((it) => it.run);
      const sampleGroup = items.find((it) => !it.run);
      const a = sampleRun ? tbody.appendChild(runRow(sampleRun.run)) : null;
      const b = sampleGroup ? tbody.appendChild(itemRow(sampleGroup)) : null;
      rowH = a ? a.getBoundingClientRect().height || 36 : 36;
      groupH = b ? b.getBoundingClientRect().height || 36 : 36;
      clear(tbody);
      heights = new Float64Array(items.length + 1);
      for (let i = 0; i < items.length; i++) heights[i + 1] = heights[i] + (items[i].run ? rowH : groupH);
    }
    const top = scroller.scrollTop;
    // An empty box is as tall as its header: the window's height is the least a
    // screenful can be (a box sized by its rows drew one row at first paint).
    const view = Math.max(scroller.clientHeight, window.innerHeight, 600);
    // First item whose bottom is below the window's top, less a screenful.
    let lo = 0;
    let hi = items.length;
    const from = Math.max(0, top - view);
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (heights[mid + 1] <= from) lo = mid + 1;
      else hi = mid;
    }
    const first = lo;
    let last = first;
    const to = top + 2 * view;
    while (last < items.length && heights[last] < to) last++;
    const spacer = (px, which) => {
      // Through the style object: the page's CSP refuses style attributes.
      const td = h('td', { colspan: RUN_COLUMNS.length + (window.tbsimCompare ? 1 : 0) });
      td.style.height = `${px}px`;
      return h('tr', { class: 'spacer', 'aria-hidden': 'true', testid: `runs-spacer-${which}` }, td);
    };
    const frag = document.createDocumentFragment();
    frag.append(spacer(heights[first], 'top'));
    for (let i = first; i < last; i++) frag.append(itemRow(items[i]));
    frag.append(spacer(heights[items.length] - heights[last], 'bottom'));
    clear(tbody).append(frag);
  };
  let frame = 0;
  scroller.addEventListener('scroll', () => {
    if (!scroller.classList.contains('virtual') || frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      drawWindow();
    });
  });
  const onResize = () => {
    if (!scroller.classList.contains('virtual')) return;
    heights = null;
    drawWindow();
  };
  window.addEventListener('resize', onResize);
  onCleanup(() => window.removeEventListener('resize', onResize));

  let lastBody = null; // null: nothing drawn yet
  const render = (data) => {
    const runs = (data && data.runs) || [];
    // The stream repeats the list on any change: nothing to redraw when it is the same.
    // The first list is written out for that after it is drawn (tens of ms at
    // 1,000 runs, which the first paint need not wait for).
    if (lastBody === null) {
      lastBody = '';
      setTimeout(() => { if (all === runs) lastBody = JSON.stringify(runs); }, 0);
    } else {
      const body = JSON.stringify(runs);
      if (body === lastBody) return;
      lastBody = body;
    }
    all = runs;
    if (compareBar) compareBar.update(runs);
    fillSelect('agent', runs.map((r) => r.agent));
    fillSelect('suite', runs.map((r) => r.suite));
    fillSelect('family', runs.flatMap((r) => r.families || []));
    fillSelect('state', runs.map((r) => r.state));
    fillSelect('tag', runs.map((r) => r.tag));
    draw();
  };
  // The summaries asked at boot, if they were (drawn unless the stream came first);
  // the stream then repeats them, drawn only if they changed.
  // The stream is opened once they are drawn: its first event is the same list,
  // which the server would otherwise build a second time during the first paint.
  let streamed = false;
  let stopStream = null;
  let gone = false;
  const openStream = () => {
    if (gone || stopStream) return;
    stopStream = subscribe('/v1/console/runs/stream', { runs: (d) => { streamed = true; render(d); } },
      async () => { streamed = true; render(await api('/v1/console/runs')); });
  };
  onCleanup(() => {
    gone = true;
    if (stopStream) stopStream();
  });
  if (early.has('/v1/console/runs')) {
    api('/v1/console/runs').then((d) => { if (!streamed) render(d); }).catch(() => {}).finally(() => requestAnimationFrame(openStream));
  } else openStream();
}

function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('span', { class: 'muted small' }, hint) : null);
}

function selectOf(options, attrs) {
  return h('select', attrs, options.map((o) => (typeof o === 'string' ? h('option', { value: o }, o) : h('option', { value: o.value }, o.label))));
}

function startForms() {
  const wrap = h('div', { class: 'forms' });
  wrap.append(startRunForm(), playForm());
  return wrap;
}

function startRunForm() {
  const scenario = selectOf(info.scenarios || [], { id: 'start-scenario', testid: 'start-scenario', name: 'scenario' });
  const agent = selectOf(info.agents || [], { id: 'start-agent', testid: 'start-agent', name: 'agent' });
  const seed = h('input', { id: 'start-seed', testid: 'start-seed', type: 'number', min: '0', step: '1', inputmode: 'numeric', placeholder: 'scenario default' });
  const hints = selectOf(['0', '1', '2', '3'], { id: 'start-hints', testid: 'start-hints' });
  const paused = h('input', { id: 'start-paused', testid: 'start-paused', type: 'checkbox' });
  const msg = h('p', { class: 'form-msg', testid: 'start-msg', 'aria-live': 'polite' });
  const form = h('form', { class: 'card', testid: 'start-form', 'aria-labelledby': 'start-h' },
    h('h2', { id: 'start-h' }, 'Start a run'),
    field('Scenario', scenario),
    field('Agent', agent),
    field('Seed', seed, 'optional'),
    field('Hint tiers up front', hints),
    h('div', { class: 'field check' }, paused, h('label', { for: 'start-paused' }, 'Start paused')),
    h('button', { type: 'submit', testid: 'start-submit' }, 'Start'),
    msg);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const body = { scenario: scenario.value, agent: agent.value, hints: Number(hints.value), paused: paused.checked };
    await startRun(body, seed, msg);
  });
  return form;
}

/** Starts a run (a built-in agent's, or a person's to play) and opens its view. */
async function startRun(body, seed, msg) {
  if (seed.value.trim() !== '') body.seed = Number(seed.value);
  msg.textContent = 'Starting…';
  msg.classList.remove('error');
  try {
    const r = await api('/v1/console/start', { method: 'POST', body });
    go(`#/run/${encodeURIComponent(r.id)}`);
  } catch (e) {
    msg.textContent = errorText(e);
    msg.classList.add('error');
  }
}

function playForm() {
  const name = h('input', { id: 'play-name', testid: 'play-name', type: 'text', autocomplete: 'nickname', maxlength: '48', required: true, value: store(NAME_KEY) });
  const scenario = selectOf(info.scenarios || [], { id: 'play-scenario', testid: 'play-scenario' });
  const seed = h('input', { id: 'play-seed', testid: 'play-seed', type: 'number', min: '0', step: '1', inputmode: 'numeric', placeholder: 'scenario default' });
  const hints = selectOf(['0', '1', '2', '3'], { id: 'play-hints', testid: 'play-hints' });
  const msg = h('p', { class: 'form-msg', testid: 'play-msg', 'aria-live': 'polite' });
  const form = h('form', { class: 'card', testid: 'play-form', 'aria-labelledby': 'play-h' },
    h('h2', { id: 'play-h' }, 'Play a scenario'),
    h('p', { class: 'muted small' }, 'You are the intern: pick the tools yourself, one decision at a time.'),
    field('Your name', name),
    field('Scenario', scenario),
    field('Seed', seed, 'optional'),
    field('Hint tiers up front', hints),
    h('button', { type: 'submit', testid: 'play-submit' }, 'Play'),
    msg);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const n = name.value.trim();
    if (!n) {
      msg.textContent = 'Your name is needed.';
      msg.classList.add('error');
      name.focus();
      return;
    }
    store(NAME_KEY, n);
    await startRun({ scenario: scenario.value, agent: `human:${n}`, hints: Number(hints.value) }, seed, msg);
  });
  return form;
}

function viewPlay(main) {
  main.append(h('h1', {}, 'Play'));
  if (!info.can_start) {
    main.append(h('p', { testid: 'play-unavailable' }, 'Play sessions start from `tbsim serve` only.'));
    return;
  }
  main.append(h('div', { class: 'forms' }, playForm()));
  $('#play-name').focus();
}

// ---------------------------------------------------------------------------
// Timeline entries

/** Names for keys (`task/…` → its title, `npc/…` → the colleague's name, a thread →
 * its title), learnt from the worlds shown; a key not learnt yet reads as words. */
const NAMES = new Map();

// Threads whose names were learnt: a world built from a delta shares its
// unchanged threads with the last one (a long run's thousands of messages).
const LEARNT = new WeakSet();

function learnNames(w) {
  for (const t of (w && w.tasks) || []) if (t.key && t.title) NAMES.set(t.key, t.title);
  for (const c of (w && w.chats) || []) {
    if (LEARNT.has(c)) continue;
    LEARNT.add(c);
    if (c.key && c.title) NAMES.set(c.key, c.title);
    for (const m of c.messages || []) if (m.from && m.from_name) NAMES.set(m.from, m.from_name);
  }
  for (const m of (w && w.calendar) || []) if (m.key && m.title) NAMES.set(m.key, m.title);
}

function displayName(key) {
  const k = String(key ?? '');
  if (NAMES.has(k)) return NAMES.get(k);
  const last = k.split('/').pop();
  if (k.startsWith('npc/') || k.startsWith('person/')) return last.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
  if (k.startsWith('thread/dm/')) return `direct messages with ${displayName(`npc/${last}`)}`;
  if (k.startsWith('thread/')) return `#${last}`;
  if (k.startsWith('task/') || k.startsWith('meeting/')) return last;
  return k;
}

const EVENT_TEXT = {
  release: (e) => `Task released: ${displayName(e.task)}`,
  meeting_start: (e) => `Meeting starts: ${displayName(e.meeting)}`,
  meeting_announce: (e) => `Announcements in ${displayName(e.meeting)}`,
  meeting_end: (e) => `Meeting ends: ${displayName(e.meeting)}`,
  deliver: (e) => `Message from ${e.from_name || displayName(e.from)} in ${displayName(e.thread)}: ${e.text}`,
  file_change: (e) => `File changes: ${e.path}`,
  deadline: (e) => `Deadline: ${displayName(e.task)}`,
  day_start: (e) => `Day ${e.day} starts`,
  day_end: (e) => `Day ${e.day} ends`,
};

const EVENT_CLASS = {
  release: 'k-release',
  meeting_start: 'k-meeting',
  meeting_announce: 'k-meeting',
  meeting_end: 'k-meeting',
  deliver: 'k-message',
  deadline: 'k-deadline',
  day_start: 'k-day',
  day_end: 'k-day',
  file_change: 'k-file',
};

function kv(obj) {
  return h('span', { class: 'kv' }, Object.entries(obj || {}).map(([k, v]) => h('span', {}, `${k} ${typeof v === 'number' ? v : pretty(v)}`)));
}

function jsonBlock(v, summary) {
  let compact;
  try {
    compact = typeof v === 'string' ? v : JSON.stringify(v);
  } catch {
    compact = String(v);
  }
  if (compact.length < 160 && !compact.includes('\n')) return h('code', { class: 'json' }, compact);
  const text = typeof v === 'string' ? v : pretty(v);
  return h('details', { class: 'json' }, h('summary', {}, summary || 'details'), h('pre', {}, text));
}

function callView(c) {
  const args = parseArgs(c.arguments);
  return h('div', { class: 'call', testid: 'call' },
    h('span', { class: 'tool' }, c.name),
    ' ',
    typeof args === 'object' && args !== null && Object.keys(args).length === 0 ? h('code', { class: 'json' }, '{}') : jsonBlock(args, 'arguments'));
}

/** What entries carry from one to the next: decision times by step (so a result
 * can say how long its call took), the last full turn request, model usage totals. */
function newCtx(tools) {
  return { decisionT: {}, lastResultT: {}, tools, lastTurnRequest: null, usage: { calls: 0, input: 0, output: 0, cost: null } };
}

function entryView(e, ctx) {
  const type = e.type;
  let body;
  let cls = `t-${type}`;
  const when = e.time ? h('time', { class: 'when' }, e.time) : h('span', { class: 'when' });
  switch (type) {
    case 'header': {
      body = [h('strong', {}, 'Run started'), ` · ${e.scenario} · agent ${e.agent} · seed ${e.seed} · hints ${e.hints}`];
      if (e.fork) body.push(h('div', { class: 'muted small', testid: 'entry-fork' }, `forked from ${e.fork.parent} at step ${e.fork.step}`));
      break;
    }
    case 'event': {
      const ev = e.event || {};
      const f = EVENT_TEXT[ev.kind];
      cls += ` ${EVENT_CLASS[ev.kind] || ''}`;
      body = [f ? f(ev) : `${ev.kind}: ${pretty(ev)}`];
      break;
    }
    case 'decision': {
      ctx.decisionT[e.step] = e.t;
      // The model's words for this decision, where people look (not only in the
      // transcript): the reply of its turn call, rendered.
      const said = ctx.reply && ctx.reply.step === e.step ? ctx.reply : null;
      ctx.reply = null;
      body = [h('strong', {}, `Step ${e.step}`), ' decision', e.tokens_out ? h('span', { class: 'muted small' }, ` · ${e.tokens_out} output tokens`) : null,
        said && said.reasoning_html ? h('details', { class: 'reasoning', testid: 'decision-reasoning' }, h('summary', {}, 'Reasoning'), sanitized(said.reasoning_html)) : null,
        said && said.html ? sanitized(said.html, { class: 'md-body reply-text', testid: 'decision-reply' }) : null,
        (e.calls || []).length ? h('div', { class: 'calls' }, e.calls.map(callView)) : h('div', { class: 'muted small' }, 'no calls')];
      break;
    }
    case 'result': {
      const r = e.result || {};
      const took = ctx.decisionT[e.step] !== undefined && typeof e.t === 'number' ? Math.round((e.t - (ctx.lastResultT[e.step] ?? ctx.decisionT[e.step])) / 60) : null;
      ctx.lastResultT[e.step] = e.t;
      const cost = ctx.tools && ctx.tools[r.tool] ? ctx.tools[r.tool].cost_minutes : null;
      // One figure: the clock this call moved. A result is stamped when its call
      // ends, so that is the gap from the decision (or the step's previous call);
      // the tool's listed cost only when the decision is not in view. A `wait` lists
      // no cost and moves the clock as far as it was asked; `finish` moves nothing.
      const mins = took ?? cost;
      cls += r.ok ? ' ok' : ' failed';
      body = [h('span', { class: 'tool' }, r.tool || e.call), r.ok ? ' ✓ ok' : ' ✗ error',
        h('span', { class: 'muted small', testid: 'entry-took', 'data-minutes': mins ?? '' }, mins ? ` · took ${mins} min` : ''),
        r.error ? h('div', { class: 'tool-error', testid: 'entry-tool-error' }, `${r.error.kind}: ${r.error.message}`) : null,
        r.result !== undefined ? h('div', {}, jsonBlock(r.result, 'result')) : null,
        (r.notifications || []).length ? h('ul', { class: 'notes' }, r.notifications.map((n) => h('li', {}, md(notificationText(n))))) : null];
      break;
    }
    case 'model': {
      const u = e.usage;
      const request = fullRequest(e, ctx);
      addUsage(ctx, u);
      if (e.purpose === 'turn') ctx.reply = e.reply ? Object.assign({ step: e.step }, e.reply) : null;
      body = [h('strong', {}, 'Model call'), ` · ${e.purpose} · ${e.model}`,
        u ? h('span', { class: 'muted small', testid: 'entry-tokens' }, ` · ${u.input_tokens ?? 0} in / ${u.output_tokens ?? 0} out tokens${u.cost !== undefined && u.cost !== null ? ` · cost ${fmtCost(u.cost)}` : ''}`) : null,
        e.error ? h('div', { class: 'tool-error' }, e.error) : null,
        (e.failures || []).length ? h('div', { class: 'muted small' }, `${e.failures.length} failed attempt(s): ${e.failures.join(' · ')}`) : null,
        transcriptView(request, e.response, e.reply)];
      break;
    }
    case 'npc': {
      body = [h('strong', {}, `Colleague ${displayName(e.npc)}`), e.model ? ` (${e.model})` : '', e.reply ? `: ${e.reply}` : ' did not reply', e.error ? h('div', { class: 'tool-error' }, e.error) : null];
      break;
    }
    case 'disclosure': {
      body = [h('strong', {}, 'Disclosure'), ` ${displayName(e.npc)} → ${e.clue}${e.task ? ` (${displayName(e.task)})` : ''}${e.first ? ' · first' : ''}`];
      break;
    }
    case 'checkpoint': {
      body = [h('strong', {}, 'Checkpoint passed'), ` ${displayName(e.task)} # ${e.checkpoint}`, h('span', { class: 'muted small' }, ` (${e.kind})`)];
      break;
    }
    case 'guidance': {
      body = [h('strong', {}, e.tier ? `Hint tier ${e.tier}` : 'Message'), ` from ${e.by}${e.task ? ` about ${displayName(e.task)}` : ''}: `, e.text_html ? sanitized(e.text_html, { class: 'md-body quote-md', testid: 'guidance-text' }) : h('span', { class: 'quote' }, e.text)];
      break;
    }
    case 'feedback': {
      body = [h('strong', {}, `Mentor feedback, day ${e.day}`), (e.lines || []).length ? h('ul', {}, e.lines.map((l) => h('li', {}, l))) : h('span', { class: 'muted' }, ' (none)')];
      break;
    }
    case 'end': {
      body = [h('strong', {}, 'Run ended'), ` · ${e.reason || 'unknown'} · ${e.steps} steps · ${e.tool_calls} tool calls`];
      break;
    }
    case 'score': {
      cls += e.success ? ' ok' : '';
      body = [h('strong', {}, 'Score'), ` ${displayName(e.task)}: ${fmtScore(e.score)}${e.success ? ' (success)' : ''}`, (e.passed || []).length ? h('span', { class: 'muted small' }, ` · passed ${e.passed.join(', ')}`) : null];
      break;
    }
    default:
      body = [h('strong', {}, type || 'line'), ' ', jsonBlock(e)];
  }
  const step = e.step !== undefined ? e.step : null;
  return h('li', { class: `entry ${cls}`, testid: 'entry', 'data-type': type, 'data-i': e.i, 'data-step': step ?? '' },
    h('span', { class: 'idx muted small' }, `#${e.i}`), when, h('div', { class: 'body' }, body));
}

// ---------------------------------------------------------------------------
// Model transcripts: what the agent sent and what came back

/**
 * The full request of a `model` line. A turn request after the first is recorded
 * compactly (`request_delta`: the first `keep` messages of the previous turn's
 * request, then `messages`; `same_tools` for its tools), so the page rebuilds it
 * from the turn before, which it has always seen (the timeline is read in order).
 */
function fullRequest(e, ctx) {
  let req = e.request || null;
  const d = e.request_delta;
  if (!req && d && typeof d === 'object') {
    const base = ctx.lastTurnRequest;
    if (base && Array.isArray(base.messages)) {
      req = Object.assign({}, d);
      delete req.keep;
      delete req.same_tools;
      req.messages = base.messages.slice(0, d.keep || 0).concat(d.messages || []);
      if (d.same_tools) req.tools = base.tools;
    } else {
      req = { messages: d.messages || [], partial: true };
    }
  }
  if (req && e.purpose === 'turn' && !req.partial) ctx.lastTurnRequest = req;
  return req;
}

function addUsage(ctx, u) {
  const t = ctx.usage;
  t.calls += 1;
  if (!u) return;
  t.input += u.input_tokens || 0;
  t.output += u.output_tokens || 0;
  if (typeof u.cost === 'number') t.cost = (t.cost || 0) + u.cost;
}

function fmtCost(c) {
  return typeof c === 'number' && isFinite(c) ? (Math.round(c * 1e6) / 1e6).toString() : '–';
}

/** A message's content: a string, or parts (text, images). */
function contentView(c) {
  if (c === null || c === undefined) return null;
  if (typeof c === 'string') return h('pre', { class: 'msg-content' }, c);
  if (Array.isArray(c)) {
    return c.map((p) => {
      if (p && p.type === 'text') return h('pre', { class: 'msg-content' }, p.text || '');
      if (p && p.type === 'image_url') return h('p', { class: 'muted small' }, '[an image]');
      return jsonBlock(p, 'part');
    });
  }
  return jsonBlock(c, 'content');
}

function toolCallsView(calls) {
  if (!Array.isArray(calls) || !calls.length) return null;
  return h('div', { class: 'calls' }, calls.map((c) => callView({ name: (c.function || {}).name || c.name, arguments: (c.function || {}).arguments ?? c.arguments })));
}

function messageView(m, i) {
  const role = (m && m.role) || '?';
  const label = role === 'tool' ? `tool result${m.name ? ` (${m.name})` : ''}${m.tool_call_id ? ` · ${m.tool_call_id}` : ''}` : role;
  return h('li', { class: `msg role-${role}`, testid: 'transcript-message', 'data-role': role },
    h('div', { class: 'msg-role muted small' }, `${i + 1}. ${label}`),
    contentView(m && m.content),
    toolCallsView(m && m.tool_calls));
}

/** The reply: text, reasoning where the API returned it, tool calls. */
function replyView(resp, rendered) {
  if (resp === null || resp === undefined) return h('p', { class: 'muted small', testid: 'transcript-reply' }, 'No reply (the call failed).');
  const choice = Array.isArray(resp.choices) ? resp.choices[0] : null;
  const m = (choice && choice.message) || null;
  if (!m) return h('div', { testid: 'transcript-reply' }, jsonBlock(resp, 'response'));
  const reasoning = m.reasoning_content || m.reasoning || null;
  return h('div', { class: 'reply', testid: 'transcript-reply' },
    reasoning ? h('details', { class: 'reasoning', testid: 'transcript-reasoning' }, h('summary', {}, 'Reasoning'), contentView(reasoning)) : null,
    m.content ? h('div', { testid: 'transcript-reply-text' }, rendered && rendered.html ? sanitized(rendered.html) : contentView(m.content)) : null,
    toolCallsView(m.tool_calls),
    !m.content && !(m.tool_calls || []).length ? h('p', { class: 'muted small' }, '(empty reply)') : null,
    choice.finish_reason ? h('p', { class: 'muted small' }, `finish: ${choice.finish_reason}`) : null);
}

function transcriptView(req, resp, rendered) {
  const msgs = (req && Array.isArray(req.messages)) ? req.messages : [];
  const tools = req && Array.isArray(req.tools) ? req.tools.length : 0;
  return h('details', { class: 'transcript', testid: 'transcript' },
    h('summary', {}, `Transcript · ${msgs.length} message${msgs.length === 1 ? '' : 's'} sent${tools ? ` · ${tools} tools offered` : ''}`),
    req ? null : h('p', { class: 'muted small' }, 'The request is not recorded.'),
    req && req.partial ? h('p', { class: 'muted small' }, 'Only the messages new in this call (the turn before it is not on record).') : null,
    msgs.length ? h('ol', { class: 'messages-sent', testid: 'transcript-messages' }, msgs.map(messageView)) : null,
    h('h5', {}, 'Reply'),
    replyView(resp, rendered));
}

/** The conversation as the model saw it, each message once (`/messages`). */
function conversationView(list) {
  if (!list.length) return h('p', { class: 'muted', testid: 'messages-empty' }, 'No model calls in this run: a built-in agent decided.');
  return h('ol', { class: 'conversation', testid: 'messages-list' }, list.map((m) => {
    const label = m.role === 'tool' ? `tool result${m.name ? ` · ${m.name}` : ''}` : m.reply ? `${m.role} (reply)` : m.role;
    return h('li', { class: `cmsg role-${m.role}${m.reply ? ' reply' : ''}`, testid: 'message', 'data-role': m.role, 'data-step': m.step, 'data-reply': String(!!m.reply) },
      h('div', { class: 'msg-role small muted' }, `${label} · step ${m.step}${m.purpose && m.purpose !== 'turn' ? ` · ${m.purpose}` : ''}`),
      m.reasoning_html ? h('details', { class: 'reasoning', testid: 'message-reasoning' }, h('summary', {}, 'Reasoning'), sanitized(m.reasoning_html)) : null,
      m.text ? sanitized(m.html, { class: 'md-body', testid: 'message-body' }) : null,
      m.images ? h('p', { class: 'muted small' }, `[${m.images} image${m.images === 1 ? '' : 's'}]`) : null,
      (m.tool_calls || []).length ? h('div', { class: 'calls' }, m.tool_calls.map((c) => callView({ name: c.name, arguments: c.arguments }))) : null);
  }));
}

function notificationText(n) {
  switch (n.kind) {
    case 'message': return `${n.at} · ${n.from_name} (${n.thread}): ${n.text}`;
    case 'task_released': return `${n.at} · New task ${n.task} “${n.title}” from ${n.assigned_by}, ${n.priority}, due ${n.deadline}: ${n.objective}${(n.hints || []).length ? ` · hints: ${n.hints.join(' / ')}` : ''}`;
    case 'meeting_starting': return `${n.at} · Meeting starting: ${n.title} (${n.meeting}) in ${n.room}, ends ${n.ends}`;
    case 'announcement': return `${n.at} · In ${n.meeting}: ${n.text}`;
    case 'meeting_ended': return `${n.at} · Meeting ended: ${n.meeting}`;
    case 'file_added': return `${n.at} · File added: ${n.path}`;
    case 'deadline_passed': return `${n.at} · Deadline passed: ${n.title} (${n.task})`;
    case 'day_ended': return `${n.at} · Day ${n.day} ended${n.more_days ? '; another day follows' : ''}`;
    case 'guidance': return `${n.at} · ${n.tier ? `Hint tier ${n.tier}` : 'Message'} from ${n.from}${n.task ? ` about ${n.task}` : ''}: ${n.text}`;
    case 'day_started': return `${n.at} · Day ${n.day} starts${(n.feedback || []).length ? ` · feedback: ${n.feedback.join(' / ')}` : ''}`;
    default: return pretty(n);
  }
}

// ---------------------------------------------------------------------------
// Generic value rendering (tool results in play mode)

function valueView(v, depth = 0) {
  if (v === null || v === undefined) return h('span', { class: 'muted' }, 'null');
  if (Array.isArray(v)) {
    if (v.length === 0) return h('span', { class: 'muted' }, '(none)');
    if (depth > 3) return h('pre', {}, pretty(v));
    return h('ol', { class: 'vlist' }, v.map((x) => h('li', {}, valueView(x, depth + 1))));
  }
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    if (keys.length === 0) return h('span', { class: 'muted' }, '{}');
    if (depth > 3) return h('pre', {}, pretty(v));
    return h('dl', { class: 'vmap' }, keys.map((k) => [h('dt', {}, k), h('dd', {}, valueView(v[k], depth + 1))]));
  }
  if (typeof v === 'string' && (v.includes('\n') || v.length > 120)) return h('pre', { class: 'text' }, v);
  return h('span', {}, String(v));
}

// ---------------------------------------------------------------------------
// Tool forms (play mode)

const LONG_TEXT = /^(content|text|code|body|message|script|source|notes?)$/;

function toolForm(tool, onSubmit) {
  const schema = tool.parameters || {};
  const props = schema.properties || {};
  const required = new Set(schema.required || []);
  const readers = [];
  const fields = [];
  for (const [pname, p] of Object.entries(props)) {
    const id = `arg-${tool.name}-${pname}`;
    const req = required.has(pname);
    const type = Array.isArray(p.type) ? p.type.find((t) => t !== 'null') : p.type;
    let input;
    let hint = p.description || '';
    let read;
    if (Array.isArray(p.enum)) {
      input = h('select', { id, testid: id, name: pname },
        req ? null : h('option', { value: '' }, '(none)'),
        p.enum.map((x) => h('option', { value: JSON.stringify(x) }, String(x))));
      read = () => (input.value === '' ? undefined : JSON.parse(input.value));
    } else if (type === 'integer' || type === 'number') {
      input = h('input', { id, testid: id, name: pname, type: 'number', step: type === 'integer' ? '1' : 'any', inputmode: type === 'integer' ? 'numeric' : 'decimal' });
      if (p.minimum !== undefined) input.min = String(p.minimum);
      if (p.maximum !== undefined) input.max = String(p.maximum);
      read = () => (input.value.trim() === '' ? undefined : Number(input.value));
    } else if (type === 'boolean') {
      input = h('select', { id, testid: id, name: pname }, req ? null : h('option', { value: '' }, '(none)'), h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
      read = () => (input.value === '' ? undefined : input.value === 'true');
    } else if (type === 'array' && (!p.items || p.items.type === 'string' || p.items.type === undefined)) {
      input = h('textarea', { id, testid: id, name: pname, rows: '3' });
      hint = `${hint ? `${hint} ` : ''}(one per line)`;
      read = () => {
        const xs = input.value.split('\n').map((s) => s.trim()).filter((s) => s !== '');
        return xs.length === 0 && !req ? undefined : xs;
      };
    } else if (type === 'string') {
      const long = LONG_TEXT.test(pname) || (p.description || '').toLowerCase().includes('multi-line');
      input = long ? h('textarea', { id, testid: id, name: pname, rows: '5' }) : h('input', { id, testid: id, name: pname, type: 'text', autocomplete: 'off' });
      read = () => (input.value === '' && !req ? undefined : input.value);
    } else {
      input = h('textarea', { id, testid: id, name: pname, rows: '3', placeholder: 'JSON' });
      hint = `${hint ? `${hint} ` : ''}(JSON)`;
      read = () => {
        if (input.value.trim() === '') return undefined;
        try {
          return JSON.parse(input.value);
        } catch {
          return input.value;
        }
      };
    }
    if (req) {
      input.required = true;
      input.setAttribute('aria-required', 'true');
    }
    const hintId = `${id}-hint`;
    if (hint) input.setAttribute('aria-describedby', hintId);
    fields.push(h('div', { class: 'field' },
      h('label', { for: id }, pname, req ? h('span', { class: 'req', title: 'required' }, ' *') : h('span', { class: 'muted small' }, ' (optional)')),
      input,
      hint ? h('span', { class: 'muted small', id: hintId }, hint) : null));
    readers.push([pname, read]);
  }
  const submit = h('button', { type: 'submit', testid: 'tool-submit' }, `Call ${tool.name}`);
  const form = h('form', { class: 'tool-form', testid: `tool-form-${tool.name}`, 'aria-label': `Call ${tool.name}` },
    h('p', { class: 'small' }, tool.description || '', tool.cost_minutes !== undefined ? h('span', { class: 'muted' }, ` · costs ${tool.cost_minutes} min`) : null),
    fields.length ? fields : h('p', { class: 'muted small' }, 'No arguments.'),
    submit);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const args = {};
    for (const [k, read] of readers) {
      const v = read();
      if (v !== undefined) args[k] = v;
    }
    onSubmit(args, submit);
  });
  return form;
}

function observationView(turn) {
  const o = (turn && turn.observation) || {};
  const parts = [];
  parts.push(h('p', { class: 'obs-head' }, h('strong', {}, o.time || ''), ` · step ${o.step ?? 0}`,
    turn && turn.progress ? ` · score ${fmtScore(turn.progress.score)}` : '',
    turn && turn.reward !== undefined && turn.reward !== null ? ` · reward ${turn.reward}` : '',
    turn && (turn.terminated || turn.truncated) ? h('strong', { testid: 'turn-over' }, turn.terminated ? ' · the run is over' : ' · the run was cut short') : ''));
  if (o.briefing) {
    const b = o.briefing;
    parts.push(h('section', { class: 'briefing', testid: 'turn-briefing' }, h('h4', {}, 'Briefing'),
      h('p', {}, `You are ${b.you} (${b.key}), in ${b.department} at ${b.company}; your manager is ${b.manager}. The working day runs ${b.day_starts} – ${b.day_ends}.`)));
  }
  for (const r of o.results || []) {
    parts.push(h('section', { class: `result ${r.ok ? 'ok' : 'failed'}`, testid: 'turn-result', 'data-tool': r.tool, 'data-ok': String(!!r.ok) },
      h('h4', {}, `${r.tool} `, r.ok ? h('span', { class: 'badge ok' }, 'ok') : h('span', { class: 'badge bad' }, 'error'), h('span', { class: 'muted small' }, ` · ${r.time}`)),
      r.error ? h('p', { class: 'tool-error', role: 'alert', testid: 'tool-error' }, h('strong', {}, `${r.error.kind}: `), r.error.message) : null,
      r.result !== undefined ? valueView(r.result) : null,
      (r.attachments || []).filter((a) => /^image\//.test(a.mime)).map((a) => h('img', { class: 'attachment', alt: `attachment (${a.mime})`, src: `data:${a.mime};base64,${a.data}` })),
      (r.notifications || []).length ? h('ul', { class: 'notes' }, r.notifications.map((n) => h('li', { class: `n-${n.kind}` }, md(notificationText(n))))) : null));
  }
  if ((o.notifications || []).length) {
    parts.push(h('section', { testid: 'turn-notifications' }, h('h4', {}, 'Notifications'),
      h('ul', { class: 'notes' }, o.notifications.map((n) => h('li', { class: `n-${n.kind}` }, md(notificationText(n)))))));
  }
  return parts;
}

// ---------------------------------------------------------------------------
// World panels

/** With answers: what a checkpoint expects beside what the agent wrote there. */
function expectedView(c) {
  const [kind, fields] = Object.entries(c.expected || {})[0] || ['', {}];
  const exp = fields && typeof fields === 'object' ? Object.assign({}, fields) : { value: fields };
  const a = c.actual;
  let wrote = null;
  if (a) {
    if (a.missing) wrote = h('span', { class: 'muted' }, 'no such file');
    else if ('value' in a) wrote = jsonBlock(a.value, 'value');
    else wrote = h('pre', { class: 'text' }, a.text || '');
  }
  return h('div', { class: 'answer expected', testid: 'cp-expected' },
    h('div', { class: 'small' }, h('strong', {}, 'Expected '), h('span', { class: 'muted' }, `(${kind})`), ' ', jsonBlock(exp, 'expected')),
    a ? h('div', { class: 'small', testid: 'cp-actual' }, h('strong', {}, 'Agent wrote '), wrote) : null);
}

function taskCard(t) {
  const [given, total] = t.hint_tiers || [0, 0];
  const g = t.guidance || { hints: 0, messages: 0 };
  return h('article', { class: `task ${t.status}`, testid: `task-${t.key}`, 'data-status': t.status },
    h('h4', {}, t.title || t.key, ' ', h('span', { class: `badge ${t.status === 'closed' ? 'done' : ''}` }, t.status)),
    h('p', { class: 'muted small' }, t.key),
    t.objective ? h('p', { class: 'objective', testid: 'task-objective' }, md(t.objective)) : null,
    h('dl', { class: 'facts' },
      h('dt', {}, 'Priority'), h('dd', {}, t.priority || '–'),
      h('dt', {}, 'Deadline'), h('dd', {}, t.deadline || '–'),
      h('dt', {}, 'Score'), h('dd', { testid: 'task-score', 'data-score': t.score }, fmtScore(t.score)),
      h('dt', {}, 'Hint tiers'), h('dd', { testid: 'task-hints' }, `${given}/${total}`),
      h('dt', {}, 'Guidance'), h('dd', { testid: 'task-guidance' }, `${g.hints} hint${g.hints === 1 ? '' : 's'}, ${g.messages} message${g.messages === 1 ? '' : 's'}`)),
    h('ul', { class: 'checkpoints', 'aria-label': 'Checkpoints' }, (t.checkpoints || []).map((c) => h('li', { class: `cp ${c.state}`, testid: `cp-${c.key}`, 'data-state': c.state },
      h('span', { class: 'cp-mark', 'aria-hidden': 'true' }, c.state === 'passed' ? '✓' : c.state === 'failed' ? '✗' : '○'),
      ` ${c.key} `,
      h('span', { class: 'muted small' }, `${c.state}${c.passed_time ? ` at ${c.passed_time}` : ''} · weight ${c.weight}${c.scored === false ? ' · diagnostic' : ''}`),
      c.description ? h('div', { class: 'answer', testid: 'cp-description' }, c.description) : null,
      c.feedback ? h('div', { class: 'answer muted small', testid: 'cp-feedback' }, `Feedback: ${c.feedback}`) : null,
      c.expected ? expectedView(c) : null))));
}

function fileTree(files, onOpen) {
  const root = {};
  for (const f of files) {
    const parts = f.path.split('/');
    let node = root;
    for (const p of parts.slice(0, -1)) {
      node[p] = node[p] || { __dir: true };
      node = node[p];
    }
    node[parts[parts.length - 1]] = { __file: f };
  }
  const render = (node, prefix) => h('ul', { class: 'tree' }, Object.keys(node).filter((k) => !k.startsWith('__')).sort().map((k) => {
    const child = node[k];
    if (child.__file) {
      const f = child.__file;
      return h('li', {}, h('button', { type: 'button', class: 'linkish', testid: `file-${f.path}`, 'data-kind': f.kind, onclick: () => onOpen(f) },
        k), h('span', { class: 'muted small' }, ` ${f.bytes} B${f.kind !== 'text' ? ` · ${f.kind}` : ''}${f.by_agent ? ' · by the agent' : ''}`));
    }
    return h('li', {}, h('details', { open: true }, h('summary', {}, `${k}/`), render(child, `${prefix}${k}/`)));
  }));
  return render(root, '');
}

function chatView(c) {
  return h('article', { class: 'chat', testid: `chat-${c.key}` },
    h('h4', {}, c.title || c.key, c.group ? h('span', { class: 'muted small' }, ' · group') : null),
    h('p', { class: 'muted small' }, (c.members || []).join(', ')),
    (c.messages || []).length ? h('ol', { class: 'messages' }, c.messages.map((m) => h('li', {},
      h('span', { class: 'muted small' }, m.time || ''), ' ', h('strong', {}, m.from_name || m.from), ': ', h('span', { class: 'msg-text' }, md(m.text)))))
      : h('p', { class: 'muted' }, 'No messages.'));
}

function calendarView(entries) {
  if (!entries.length) return h('p', { class: 'muted' }, 'Nothing on the calendar.');
  return h('ul', { class: 'calendar' }, entries.map((c) => h('li', { testid: `meeting-${c.key}` },
    h('div', {}, h('strong', {}, `${c.start} – ${c.end}`), ' ', c.title),
    h('div', { class: 'muted small' }, `${c.room || 'no room'} · ${(c.attendees || []).join(', ')}`,
      c.booked_by_agent ? ' · booked by the agent' : '', c.joined ? ' · joined' : ''))));
}

// ---------------------------------------------------------------------------
// Run view

/** Timeline lines asked for first (the first paint: a screenful, about a dozen rows
 * show in the timeline's box; with 120 the frame that drew them spent 80 ms in
 * layout on a loaded machine), then a page a frame. */
const TIMELINE_FIRST_PAGE = 40;
const TIMELINE_PAGE = 400;
/** The timeline's later pages wait until the scrubber has rested this long. */
const SCRUB_QUIET_MS = 400;

function nextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => resolve()));
}

function viewRun(main, id, atStep) {
  const st = {
    id,
    detail: null,
    entries: [],
    next: 0,
    world: null,
    scrub: null, // a step the user chose; null: follow the latest
    answers: false,
    tools: null,
    toolMap: null,
    turn: null,
    ctx: newCtx(null),
    worldTimer: null,
    lastSteps: -1,
    scrubbedAt: -Infinity, // when the scrubber last moved (performance.now())
    pageAbort: null, // drops the timeline page on its way
    ended: false,
    playing: false, // a person's play session still going: only the tools show the world
    scrollPending: false,
    tlGen: 0, // bumped when the timeline starts again: pages of an older one are dropped
    gone: false, // the view was left
  };
  onCleanup(() => { st.gone = true; });
  const enc = encodeURIComponent(id);
  const base = `/v1/console/runs/${enc}`;

  // --- skeleton
  const title = h('h1', { testid: 'run-title' }, `Run ${id}`);
  const sub = h('p', { class: 'muted', testid: 'run-sub' });
  const clock = h('dd', { testid: 'run-clock' }, '–');
  const day = h('dd', { testid: 'run-day' }, '–');
  const stateDd = h('dd', { 'aria-live': 'polite' });
  const steps = h('dd', { testid: 'run-steps' }, '0');
  const score = h('dd', { testid: 'run-score' }, '–');
  const endReason = h('dd', { testid: 'run-end' }, '–');
  // The agent's model calls so far: calls, tokens, cost (model-backed runs only).
  const modelTotals = h('dd', { testid: 'run-model-usage' });
  const modelWrap = h('div', { hidden: true }, h('dt', {}, 'Model'), modelTotals);
  const stats = h('dl', { class: 'stats' },
    h('div', {}, h('dt', {}, 'Clock'), clock), h('div', {}, h('dt', {}, 'Day'), day), h('div', {}, h('dt', {}, 'State'), stateDd),
    h('div', {}, h('dt', {}, 'Steps'), steps), h('div', {}, h('dt', {}, 'Score'), score), h('div', {}, h('dt', {}, 'End'), endReason),
    modelWrap);
  const err = h('p', { class: 'error', role: 'alert', testid: 'run-error', hidden: true });

  const btn = (label, testid, action) => h('button', { type: 'button', testid, onclick: () => control(action) }, label);
  const bPause = btn('Pause', 'btn-pause', 'pause');
  const bResume = btn('Resume', 'btn-resume', 'resume');
  const bStep = btn('Step', 'btn-step', 'step');
  // Closing ends the run for good: it asks first, in the page (no modal dialog).
  const bClose = h('button', { type: 'button', testid: 'btn-close', onclick: () => { closeAsk.hidden = false; closeYes.focus(); } }, 'Close run');
  const closeYes = h('button', { type: 'button', class: 'danger', testid: 'btn-close-confirm', onclick: () => { closeAsk.hidden = true; control('close'); } }, 'Close it');
  const closeNo = h('button', { type: 'button', testid: 'btn-close-cancel', onclick: () => { closeAsk.hidden = true; bClose.focus(); } }, 'Keep it going');
  const closeAsk = h('span', { class: 'confirm', testid: 'close-confirm', role: 'alertdialog', 'aria-label': 'Close the run?', hidden: true },
    'End this run now? It is written as abandoned and cannot go on. ', closeYes, ' ', closeNo);
  const controls = h('div', { class: 'controls', role: 'group', 'aria-label': 'Run controls', testid: 'controls', hidden: true }, bPause, bResume, bStep, bClose, closeAsk);

  // scrubber
  const range = h('input', { type: 'range', id: 'scrub-range', testid: 'scrub-range', min: '0', max: '0', step: '1', value: '0' });
  const prev = h('button', { type: 'button', testid: 'scrub-prev', 'aria-label': 'Previous step' }, '◀ Prev');
  const nextB = h('button', { type: 'button', testid: 'scrub-next', 'aria-label': 'Next step' }, 'Next ▶');
  const latest = h('button', { type: 'button', testid: 'scrub-latest' }, 'Latest');
  const scrubLabel = h('span', { class: 'scrub-label', testid: 'scrub-label', 'aria-live': 'polite' }, 'step 0');
  const forkAgent = h('select', { id: 'fork-agent', testid: 'fork-agent' });
  const forkName = h('input', { id: 'fork-name', testid: 'fork-name', type: 'text', maxlength: '48', value: store(NAME_KEY), autocomplete: 'nickname' });
  const forkNameField = h('span', { class: 'inline-field' }, h('label', { for: 'fork-name' }, 'Your name'), forkName);
  const forkBtn = h('button', { type: 'button', testid: 'fork-button' }, 'Fork here');
  const forkMsg = h('span', { class: 'form-msg', testid: 'fork-msg', 'aria-live': 'polite' });
  const answersBox = h('input', { type: 'checkbox', id: 'answers-toggle', testid: 'answers-toggle' });
  const answersWrap = h('span', { class: 'inline-field', hidden: true, testid: 'answers-wrap' }, answersBox, h('label', { for: 'answers-toggle' }, 'Show answers'));
  const scrubber = h('section', { class: 'scrubber card', 'aria-label': 'Step scrubber', testid: 'scrubber' },
    h('div', { class: 'scrub-row' }, h('label', { for: 'scrub-range' }, 'Step'), prev, range, nextB, latest, scrubLabel),
    // A static export has no server to fork on.
    h('div', { class: 'scrub-row', hidden: !!info.static },
      h('span', { class: 'inline-field' }, h('label', { for: 'fork-agent' }, 'Fork with agent'), forkAgent), forkNameField, forkBtn, forkMsg, answersWrap));

  // guidance
  const guidance = h('section', { class: 'card guidance', testid: 'guidance-panel', 'aria-labelledby': 'guide-h', hidden: true });
  const hintList = h('ul', { class: 'hint-list', testid: 'hint-list' });
  const hintNone = h('p', { class: 'muted small' }, 'No task released yet.');
  const hintQueue = h('p', { class: 'muted small', testid: 'guide-queued', 'aria-live': 'polite' });
  const needName = h('p', { id: 'guide-need-name', class: 'form-msg', testid: 'guide-need-name', hidden: true }, 'Fill in “From” below to send hints: guidance is recorded with who sent it.');
  const hintRows = new Map();
  // The tiers given when the hint previews were last asked for.
  let hintSig = '';
  const gFrom = h('input', { id: 'guide-from', testid: 'guide-from', type: 'text', maxlength: '48', value: store(NAME_KEY), autocomplete: 'nickname', required: true });
  const gTask = h('select', { id: 'guide-task', testid: 'guide-task' }, h('option', { value: '' }, '(no task)'));
  const gText = h('textarea', { id: 'guide-text', testid: 'guide-text', rows: '2', maxlength: '4000' });
  const gSend = h('button', { type: 'submit', testid: 'guide-send' }, 'Send message');
  const gMsg = h('p', { class: 'form-msg', testid: 'guide-status', 'aria-live': 'polite' });
  const gForm = h('form', { class: 'guide-form', testid: 'guide-form' },
    field('From', gFrom), field('About task', gTask), field('Message', gText), gSend);
  guidance.append(h('h2', { id: 'guide-h' }, 'Guidance'), h('p', { class: 'muted small' }, 'Reaches the agent before its next decision.'), hintNone, needName, hintList, hintQueue, gForm, gMsg);
  gFrom.addEventListener('change', () => {
    store(NAME_KEY, gFrom.value.trim());
    forkName.value = gFrom.value.trim();
  });
  gFrom.addEventListener('input', () => {
    store(NAME_KEY, gFrom.value.trim());
    if (st.detail) renderGuidance(st.detail);
  });

  // play panel
  const play = h('section', { class: 'card play', testid: 'play-panel', 'aria-labelledby': 'play-panel-h', hidden: true });
  const turnView = h('div', { class: 'turn', testid: 'turn-view', 'aria-live': 'polite' });
  const toolSelect = h('select', { id: 'play-tool', testid: 'play-tool' });
  const toolHolder = h('div', { testid: 'tool-form-holder' });
  const playMsg = h('p', { class: 'form-msg', testid: 'play-error', 'aria-live': 'assertive' });
  // Everything the player was shown before this turn (the agent keeps its whole
  // conversation; so does the player), and a fork's recap of the steps before it.
  const recapBox = h('details', { class: 'recap', testid: 'play-recap', hidden: true });
  const histList = h('ol', { class: 'play-history', testid: 'play-history' });
  const histBox = h('section', { class: 'history-box', 'aria-label': 'Earlier turns', hidden: true }, h('h3', {}, 'Earlier turns'), histList);
  play.append(recapBox, histBox, h('h2', { id: 'play-panel-h' }, 'Your turn'), turnView,
    h('div', { class: 'act' }, field('Tool', toolSelect), toolHolder, playMsg));

  // timeline
  const timeline = h('ol', { class: 'timeline', testid: 'timeline', 'aria-label': 'Timeline' });
  const tlCount = h('span', { class: 'muted small', testid: 'timeline-count' }, '0 lines');
  const tlBox = h('div', { class: 'timeline-box', tabindex: '0', 'aria-label': 'Timeline, scrollable' }, timeline);
  // Search in the run: free text, or a jump list (errors, days, tools, colleagues,
  // tasks) built from the entries; matches are stepped through in the box.
  const tlSearch = h('input', { type: 'search', id: 'tl-search', testid: 'timeline-search', placeholder: 'text, or error: / tool:NAME / from:NAME / task:KEY / day:N', 'aria-describedby': 'tl-search-n', autocomplete: 'off' });
  const tlJump = h('select', { id: 'tl-jump', testid: 'timeline-jump', 'aria-label': 'Jump to' }, h('option', { value: '' }, 'Jump to…'));
  const tlPrev = h('button', { type: 'button', testid: 'search-prev', 'aria-label': 'Previous match' }, '▲');
  const tlNext = h('button', { type: 'button', testid: 'search-next', 'aria-label': 'Next match' }, '▼');
  const tlHits = h('span', { class: 'muted small', id: 'tl-search-n', testid: 'search-count', 'aria-live': 'polite' });
  const tlResults = h('ol', { class: 'search-results', testid: 'search-results', hidden: true });
  const searchBar = h('form', { class: 'tl-searchbar', role: 'search', 'aria-label': 'Search the run', testid: 'timeline-searchbar', onsubmit: (ev) => { ev.preventDefault(); stepHit(1); } },
    h('label', { for: 'tl-search', class: 'visually-hidden' }, 'Search the run'), tlSearch, tlJump, tlPrev, tlNext, tlHits);
  const tlPane = h('div', { testid: 'timeline-pane' }, searchBar, tlResults, tlBox);
  // The model's conversation, each message once (model-backed runs).
  const msgBox = h('div', { class: 'messages-box', testid: 'messages-view', tabindex: '0', 'aria-label': 'Messages, scrollable', hidden: true });
  const mainTabs = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'Run view' });
  const mainTab = (key, label) => h('button', { type: 'button', role: 'tab', testid: `tab-${key}`, 'aria-selected': String(key === 'timeline'), onclick: () => showMain(key) }, label);
  const tTimeline = mainTab('timeline', 'Timeline');
  const tMessages = mainTab('messages', 'Messages');
  mainTabs.append(tTimeline, tMessages);
  let msgLoaded = false;
  function showMain(key) {
    tTimeline.setAttribute('aria-selected', String(key === 'timeline'));
    tMessages.setAttribute('aria-selected', String(key === 'messages'));
    tlPane.hidden = key !== 'timeline';
    msgBox.hidden = key !== 'messages';
    if (key === 'messages' && !msgLoaded) loadMessages();
    if (key === 'timeline') scheduleBand();
  }
  async function loadMessages() {
    msgLoaded = true;
    clear(msgBox).append(h('p', { class: 'muted' }, 'Loading the conversation…'));
    try {
      const r = await api(`${base}/messages`);
      clear(msgBox).append(conversationView(r.messages || []));
      msgBox.dataset.count = String((r.messages || []).length);
    } catch (e) {
      msgLoaded = false;
      clear(msgBox).append(h('p', { class: 'error', role: 'alert' }, errorText(e)));
    }
  }
  const tlSection = h('section', { class: 'card', 'aria-labelledby': 'tl-h' }, h('h2', { id: 'tl-h' }, 'Timeline ', tlCount), mainTabs, tlPane, msgBox);

  // side tabs
  const tabNames = [['tasks', 'Tasks'], ['files', 'Files'], ['chats', 'Chats'], ['calendar', 'Calendar']];
  const panels = {};
  const tabs = {};
  const tablist = h('div', { class: 'tabs', role: 'tablist', 'aria-label': 'World' });
  for (const [key, label] of tabNames) {
    tabs[key] = h('button', { type: 'button', role: 'tab', id: `tab-${key}`, testid: `tab-${key}`, 'aria-controls': `panel-${key}`, 'aria-selected': 'false', onclick: () => selectTab(key) }, label);
    panels[key] = h('div', { role: 'tabpanel', id: `panel-${key}`, testid: `panel-${key}`, 'aria-labelledby': `tab-${key}`, hidden: true, tabindex: '0' });
    tablist.append(tabs[key]);
  }
  tablist.addEventListener('keydown', (ev) => {
    if (ev.key !== 'ArrowRight' && ev.key !== 'ArrowLeft') return;
    ev.preventDefault();
    ev.stopPropagation();
    const keys = tabNames.map((t) => t[0]);
    const cur = keys.findIndex((k) => tabs[k].getAttribute('aria-selected') === 'true');
    const nxt = keys[(cur + (ev.key === 'ArrowRight' ? 1 : keys.length - 1)) % keys.length];
    selectTab(nxt);
    tabs[nxt].focus();
  });
  // Panels drawn only when shown: a long run's chats are thousands of messages,
  // which would otherwise be laid out on every world shown, seen or not.
  const stalePanels = new Map();
  function drawPanel(key, draw) {
    if (panels[key].hidden) stalePanels.set(key, draw);
    else {
      stalePanels.delete(key);
      draw();
    }
  }
  function selectTab(key) {
    for (const [k] of tabNames) {
      tabs[k].setAttribute('aria-selected', String(k === key));
      tabs[k].tabIndex = k === key ? 0 : -1;
      panels[k].hidden = k !== key;
    }
    const draw = stalePanels.get(key);
    if (draw) {
      stalePanels.delete(key);
      draw();
    }
  }
  selectTab('tasks');
  const worldNote = h('p', { class: 'muted small', testid: 'world-note' });
  const fileViewer = h('div', { class: 'file-viewer', testid: 'file-viewer', 'aria-live': 'polite' });
  const side = h('section', { class: 'card side', 'aria-label': 'World' }, worldNote, tablist, Object.values(panels));

  // What a player sees instead of the free views (docs/console.md, "Playing").
  const playNote = h('p', { class: 'muted small', testid: 'play-fair-note', hidden: true },
    'You see the world only through your tools, as an agent does: each call costs its simulated time. The timeline, files, chats, calendar and task checkpoints open when the run ends; nobody can send you hints or messages.');
  // While a person plays this run's scenario, its other runs show nothing (docs/console.md).
  const lockNote = h('p', { class: 'card', testid: 'locked-note', role: 'status', hidden: true },
    'Someone is playing this scenario right now: its other runs are hidden until the play ends, so nothing here gives the answers away.');
  main.append(h('div', { class: 'run-head' }, h('div', {}, title, sub), stats), err, controls, scrubber, playNote, lockNote,
    h('div', { class: 'layout' }, h('div', { class: 'col-main' }, play, tlSection), h('div', { class: 'col-side' }, guidance, side)));

  // --- behaviour
  function showError(e) {
    err.textContent = e ? errorText(e) : '';
    err.hidden = !e;
  }

  async function control(action) {
    showError(null);
    try {
      const d = await api(`${base}/${action}`, { method: 'POST' });
      // The answer is the run as the action found it: a step it queued may already
      // have been streamed, and the stream does not repeat itself, so an answer
      // behind what is shown is not applied (a run's steps never go back).
      const shown = st.detail ? (st.detail.steps ?? 0) : 0;
      if (d && d.id && (d.steps ?? 0) >= shown) applyDetail(d);
      announce(`${action} sent`);
    } catch (e) {
      showError(e);
    }
  }

  function maxStep() {
    const d = st.detail;
    return d ? (d.steps ?? d.step ?? 0) : 0;
  }

  function applyDetail(d) {
    const wasQueued = st.detail && st.detail.state === 'queued';
    st.detail = d;
    if (wasQueued && d.state !== 'queued') scheduleWorld();
    const wasPlaying = st.playing;
    st.playing = !!d.playable;
    const wasLocked = st.locked;
    st.locked = !!d.locked && !st.playing;
    for (const el of [scrubber, tlSection, side]) el.hidden = st.playing || st.locked;
    playNote.hidden = !st.playing;
    lockNote.hidden = !st.locked;
    if (wasLocked && !st.locked) {
      loadAllTimeline();
      scheduleWorld();
    }
    if (wasPlaying && !st.playing) scheduleWorld();
    // Rebuilt only when it changes: a fork's parent link replaced by every update of a
    // live run would swallow a click whose press and release landed on two elements.
    title.textContent = `Run ${runLabel(d)}`;
    const subKey = JSON.stringify([d.scenario, d.agent, d.seed, d.hints, d.kind, d.fork || null]);
    if (sub.dataset.key !== subKey) {
      sub.dataset.key = subKey;
      sub.textContent = `${d.scenario} · agent ${d.agent} · seed ${d.seed} · hints ${d.hints} · ${d.kind}`;
      if (d.fork) {
        clear(sub).append(`${d.scenario} · agent ${d.agent} · seed ${d.seed} · hints ${d.hints} · ${d.kind} · fork of `,
          h('a', { href: `#/run/${encodeURIComponent(d.fork.parent)}` }, d.fork.parent), ` at step ${d.fork.step}`);
      }
    }
    clock.textContent = d.time || '–';
    day.textContent = `${d.day ?? '–'} / ${d.days ?? '–'}`;
    if (stateDd.dataset.state !== d.state) {
      stateDd.dataset.state = d.state;
      clear(stateDd).append(stateBadge(d.state, 'run-state'));
    }
    steps.textContent = String(d.steps ?? d.step ?? 0);
    steps.dataset.steps = String(d.steps ?? d.step ?? 0);
    score.textContent = fmtScore(d.score);
    score.dataset.score = String(d.score);
    endReason.textContent = d.end_reason || '–';
    controls.hidden = !d.controllable;
    // Only a built-in agent's run is held (`pausable`): a person playing, or a
    // program over the API, would only have its own next call hang.
    for (const b of [bPause, bResume, bStep]) b.hidden = !d.pausable;
    // Pause stays pressable while paused (a no-op then): pressed shows the state.
    bPause.disabled = !d.controllable || d.state === 'finished';
    bPause.setAttribute('aria-pressed', String(d.state === 'paused'));
    bPause.textContent = 'Pause';
    bResume.disabled = !d.controllable || d.state !== 'paused';
    bStep.disabled = !d.controllable || d.state !== 'paused';
    bClose.disabled = d.state === 'finished';
    renderGuidance(d);
    // Scrubber bounds.
    const m = maxStep();
    range.max = String(m);
    if (st.scrub === null) range.value = String(m);
    answersWrap.hidden = !(info.answers_allowed && d.state === 'finished') || st.locked;
    // A job not started has nothing to fork or scrub.
    scrubber.hidden = st.playing || st.locked || d.state === 'queued';
    if (d.state === 'queued') {
      clock.textContent = 'queued';
      day.textContent = `– / ${d.days ?? '–'}`;
    }
    if (answersWrap.hidden && st.answers) {
      st.answers = false;
      answersBox.checked = false;
    }
    updateScrubLabel();
    // Play panel.
    if (d.playable) {
      play.hidden = false;
      toolHolder.hidden = false;
      toolSelect.disabled = false;
    } else if (!play.hidden && st.turn) {
      // Keep the last turn on view; the form goes.
      toolHolder.hidden = true;
      toolSelect.disabled = true;
    }
    if (m !== st.lastSteps) {
      st.lastSteps = m;
      if (st.scrub === null) scheduleWorld();
      if (d.playable) loadTurn();
    }
  }

  function renderGuidance(d) {
    guidance.hidden = !d.controllable || st.playing;
    if (guidance.hidden) return;
    // Rows are updated in place, so a focused button keeps its focus.
    const tiers = d.hint_tiers || {};
    const keys = Object.keys(tiers);
    hintNone.hidden = keys.length > 0;
    needName.hidden = keys.length === 0 || !!gFrom.value.trim();
    for (const [k, row] of hintRows) {
      if (!(k in tiers)) {
        row.li.remove();
        hintRows.delete(k);
      }
    }
    keys.forEach((k, i) => {
      const [given, total] = tiers[k];
      const gd = (d.guidance || {})[k];
      let row = hintRows.get(k);
      if (!row) {
        const button = h('button', { type: 'button', testid: `hint-${k}`, onclick: () => sendHint(k) }, `Send next hint tier for ${k}`);
        const count = h('span', { class: 'muted small', testid: `hint-count-${k}` });
        // What the button would send (the next tier's text), read from the server.
        const preview = h('div', { class: 'small hint-preview', testid: `hint-preview-${k}` });
        row = { li: h('li', { testid: `hint-row-${k}` }, button, ' ', count, preview), button, count, preview };
        hintRows.set(k, row);
      }
      // The server's order; a row already in place is not moved (it keeps focus).
      if (hintList.children[i] !== row.li) hintList.insertBefore(row.li, hintList.children[i] || null);
      row.button.disabled = given >= total || !gFrom.value.trim();
      row.button.setAttribute('aria-describedby', 'guide-need-name');
      row.count.textContent = `${given}/${total} given${gd ? ` · ${gd.hints} by guidance, ${gd.messages} message${gd.messages === 1 ? '' : 's'}` : ''}`;
    });
    // The previews follow the tiers given and whether the run is hidden (a person
    // plays its scenario: the server refuses them then): asked again only when
    // either changes, not at every update of a live run.
    const sig = `${d.locked ? 'locked' : ''}\n${keys.map((k) => `${k}=${tiers[k][0]}`).join('\n')}`;
    if (sig !== hintSig) {
      hintSig = sig;
      api(`/v1/console/runs/${encodeURIComponent(id)}/hints`).then((r) => {
        if (hintSig !== sig) return;
        for (const [k, row] of hintRows) {
          const n = (r.next || {})[k];
          row.preview.textContent = n ? `Next, tier ${n.tier}: ${n.text}` : 'No tier left.';
          row.preview.dataset.tier = n ? n.tier : '';
        }
      }).catch((e) => {
        if (hintSig !== sig) return;
        for (const row of hintRows.values()) {
          row.preview.textContent = `No preview: ${errorText(e)}`;
          row.preview.dataset.tier = '';
        }
      });
    }
    hintQueue.textContent = `${d.queued ? `${d.queued} queued for the next decision` : ''}${d.queued && d.dropped ? ' · ' : ''}${d.dropped ? `${d.dropped} dropped` : ''}`;
    // Task choices for messages.
    const cur = gTask.value;
    const have = new Set(Array.from(gTask.options).map((o) => o.value));
    for (const k of keys) if (!have.has(k)) gTask.append(h('option', { value: k }, k));
    gTask.value = cur;
  }

  function byName() {
    const n = gFrom.value.trim();
    if (!n) return null;
    store(NAME_KEY, n);
    return n.startsWith('human:') ? n : `human:${n}`;
  }

  /** The sender's name, or null after asking for it. */
  function senderOrAsk() {
    const by = byName();
    if (!by) {
      gMsg.textContent = 'Say who you are in “From” first.';
      gMsg.className = 'form-msg error';
      gFrom.focus();
    }
    return by;
  }

  async function sendHint(task) {
    const by = senderOrAsk();
    if (!by) return;
    try {
      const r = await api(`${base}/guide`, { method: 'POST', body: { by, task, kind: 'hint' } });
      gMsg.textContent = `Hint tier ${r.tier} for ${task} queued.`;
      gMsg.className = 'form-msg ok';
      refreshDetail();
    } catch (e) {
      gMsg.textContent = errorText(e);
      gMsg.className = 'form-msg error';
    }
  }

  gForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const by = senderOrAsk();
    if (!by) return;
    const body = { by, kind: 'message', text: gText.value };
    if (gTask.value) body.task = gTask.value;
    try {
      await api(`${base}/guide`, { method: 'POST', body });
      gMsg.textContent = 'Message queued.';
      gMsg.className = 'form-msg ok';
      gText.value = '';
      refreshDetail();
    } catch (e) {
      gMsg.textContent = errorText(e);
      gMsg.className = 'form-msg error';
    }
  });

  async function refreshDetail() {
    try {
      applyDetail(await api(base));
    } catch (e) {
      showError(e);
    }
  }

  // Timeline.
  function appendEntries(lines) {
    const box = tlBox;
    // An empty timeline is at its bottom: asking the box would lay out the whole
    // page (the world just drawn) before the first paint, for nothing.
    const wasEmpty = !st.entries.length;
    const atBottom = wasEmpty || box.scrollHeight - box.scrollTop - box.clientHeight < 40;
    const frag = document.createDocumentFragment();
    for (const e of lines) {
      if (typeof e.i === 'number' && e.i < st.next) continue; // seen already
      st.entries.push(e);
      st.next = (typeof e.i === 'number' ? e.i : st.next) + 1;
      frag.append(entryView(e, st.ctx));
    }
    timeline.append(frag);
    // Entries keep their line numbers (#i); hidden lines leave gaps, so say both.
    const read = st.next;
    const hiddenN = read - st.entries.length;
    tlCount.textContent = `${st.entries.length} entr${st.entries.length === 1 ? 'y' : 'ies'} (#0–#${Math.max(0, read - 1)}${hiddenN > 0 ? `, ${hiddenN} hidden` : ''})`;
    const u = st.ctx.usage;
    modelWrap.hidden = u.calls === 0;
    modelTotals.textContent = `${u.calls} call${u.calls === 1 ? '' : 's'} · ${u.input} in / ${u.output} out tokens${u.cost !== null ? ` · cost ${fmtCost(u.cost)}` : ''}`;
    Object.assign(modelTotals.dataset, { calls: String(u.calls), input: String(u.input), output: String(u.output), cost: String(u.cost ?? '') });
    tlCount.dataset.count = String(st.entries.length);
    if (!fillJump.timer) fillJump.timer = setTimeout(() => { fillJump.timer = null; fillJump(); }, 300);
    // A step from the address is scrolled to once its decision has arrived.
    if (highlight(st.scrollPending, st.scrollPending)) st.scrollPending = false;
    if (atBottom && st.scrub === null) {
      // The first page is scrolled at the frame, when the page is laid out anyway.
      if (wasEmpty) requestAnimationFrame(() => { if (st.scrub === null) box.scrollTop = box.scrollHeight; });
      else box.scrollTop = box.scrollHeight;
    }
  }

  function resetTimeline() {
    st.tlGen++;
    st.entries = [];
    st.next = 0;
    st.ctx = newCtx(st.toolMap);
    clear(timeline);
    hl.rows = [];
    hl.steps = [];
    hl.decisions = new Map();
    hl.boundary = null;
    hl.current = null;
    band.on = false;
    band.lo = 0;
    band.hi = 0;
    band.strays.clear();
    clearTimeout(band.trim);
  }

  let stopStream = null;
  function startStream() {
    if (stopStream) stopStream();
    stopStream = null;
    if (st.answers) {
      // Answers are only for finished runs: one fetch of everything.
      loadAllTimeline();
      return;
    }
    const pollOnce = async () => {
      if (st.playing) {
        await refreshDetail();
        return;
      }
      const r = await api(`${base}/timeline?from=${st.next}`);
      appendEntries(r.lines || []);
      if (r.finished && !st.ended) {
        st.ended = true;
        await refreshDetail();
      } else if (!r.finished) {
        await refreshDetail();
      }
    };
    // Lines come one event each: they are drawn together, once a frame.
    let batch = [];
    const flush = () => {
      const lines = batch;
      batch = [];
      appendEntries(lines);
    };
    stopStream = subscribe(`${base}/stream?from=${st.next}`, {
      line: (e) => {
        if (!batch.length) requestAnimationFrame(flush);
        batch.push(e);
      },
      status: (d) => applyDetail(d),
      end: (d) => {
        st.ended = true;
        applyDetail(d);
        if (stopStream) stopStream();
        stopStream = null;
        scheduleWorld();
        announce('The run is over.');
      },
      onfail: () => {
        // Reconnect from where we are (EventSource alone would start again at from=0).
        if (st.ended) return;
        setTimeout(() => { if (!st.ended && stopStream) startStream(); }, 1000);
      },
    }, pollOnce, 1000);
  }
  onCleanup(() => stopStream && stopStream());

  async function loadAllTimeline() {
    try {
      resetTimeline();
      const gen = st.tlGen;
      let from = 0;
      for (let guard = 0; guard < 10000; guard++) {
        const r = await api(`${base}/timeline?from=${from}&limit=${TIMELINE_PAGE}${st.answers ? '&answers=1' : ''}`);
        if (gen !== st.tlGen || st.gone) return;
        appendEntries(r.lines || []);
        if (r.next === undefined || r.next <= from || r.next >= (r.total ?? r.next)) break;
        from = r.next;
        await nextFrame();
      }
    } catch (e) {
      showError(e);
    }
  }

  /**
   * The timeline after its first page (`first`), a page a frame, so the first
   * paint waits for one page only; resolves when it is all drawn (or dropped).
   */
  /** Resolves once the scrubber has rested SCRUB_QUIET_MS: a page drawn costs the
   * page tens of ms, so while the reader moves the scrubber the pages wait (the
   * step's world and rows come first). */
  async function scrubQuiet() {
    while (performance.now() - st.scrubbedAt < SCRUB_QUIET_MS && !st.gone) await new Promise((ok) => setTimeout(ok, 100));
  }

  async function loadRestOfTimeline(first) {
    const gen = st.tlGen;
    let r = first;
    while (r && r.next < (r.total ?? r.next)) {
      await nextFrame();
      await scrubQuiet();
      if (gen !== st.tlGen || st.gone) return;
      // A page is a megabyte on a long run: the scrubber moving drops the one on its
      // way (asked again once the scrubber rests), not to read it meanwhile.
      const ctl = new AbortController();
      st.pageAbort = ctl;
      let page;
      try {
        page = await api(`${base}/timeline?from=${r.next}&limit=${TIMELINE_PAGE}`, { signal: ctl.signal });
      } catch (e) {
        if (ctl.signal.aborted) continue;
        throw e;
      } finally {
        if (st.pageAbort === ctl) st.pageAbort = null;
      }
      r = page;
      await scrubQuiet();
      if (gen !== st.tlGen || st.gone) return;
      appendEntries(r.lines || []);
      st.next = Math.max(st.next, r.next);
    }
  }

  // --- search in the run
  /** Whether entry `e` (its drawn row `li`) matches query `q`. */
  function entryMatches(e, li, q) {
    const m = q.match(/^(error|errors|tool|from|task|day):\s*(.*)$/i);
    if (!m) return li.textContent.toLowerCase().includes(q.toLowerCase());
    const kind = m[1].toLowerCase();
    const v = m[2].trim().toLowerCase();
    const ev = e.event || {};
    switch (kind) {
      case 'error':
      case 'errors':
        return (e.type === 'result' && e.result && !e.result.ok) || (e.type === 'model' && !!e.error) || (e.type === 'npc' && !!e.error);
      case 'tool':
        return (e.type === 'result' && (e.result || {}).tool === v) || (e.type === 'decision' && (e.calls || []).some((c) => c.name === v));
      case 'from': {
        const who = [ev.from, ev.from_name, e.npc, e.from].filter(Boolean).map((x) => String(x).toLowerCase());
        if (who.some((w) => w === v || w.includes(v))) return true;
        // A call to a colleague (its arguments name them).
        return e.type === 'decision' && (e.calls || []).some((c) => String(c.arguments || '').toLowerCase().includes(v));
      }
      case 'task':
        return [ev.task, e.task].some((t) => t && String(t).toLowerCase() === v)
          || (e.type === 'decision' && (e.calls || []).some((c) => String(c.arguments || '').toLowerCase().includes(v)));
      case 'day':
        return (e.type === 'event' && ev.kind === 'day_start' && String(ev.day) === v);
      default:
        return false;
    }
  }
  let hits = [];
  let hitAt = -1;
  function runSearch() {
    const q = tlSearch.value.trim();
    for (const li of timeline.querySelectorAll('.search-hit')) li.classList.remove('search-hit', 'search-here');
    hits = [];
    hitAt = -1;
    clear(tlResults);
    tlResults.hidden = !q;
    if (!q) {
      tlHits.textContent = '';
      return;
    }
    const lis = timeline.children;
    for (let k = 0; k < st.entries.length && k < lis.length; k++) {
      if (entryMatches(st.entries[k], lis[k], q)) hits.push(lis[k]);
    }
    for (const li of hits) li.classList.add('search-hit');
    tlHits.textContent = `${hits.length} match${hits.length === 1 ? '' : 'es'}`;
    tlHits.dataset.count = String(hits.length);
    // A list of the first matches: each jumps to its entry.
    for (const li of hits.slice(0, 100)) {
      const label = li.querySelector('.body').textContent.replace(/\s+/g, ' ').slice(0, 120);
      tlResults.append(h('li', {}, h('button', { type: 'button', class: 'linkish', testid: 'search-result', 'data-i': li.dataset.i, onclick: () => jumpTo(hits.indexOf(li)) },
        `#${li.dataset.i}${li.dataset.step ? ` · step ${li.dataset.step}` : ''} · ${label}`)));
    }
    if (hits.length > 100) tlResults.append(h('li', { class: 'muted small' }, `… and ${hits.length - 100} more (▲ ▼ step through all)`));
    if (hits.length) jumpTo(0);
  }
  function jumpTo(k) {
    if (!hits.length) return;
    hitAt = ((k % hits.length) + hits.length) % hits.length;
    for (const li of timeline.querySelectorAll('.search-here')) li.classList.remove('search-here');
    const li = hits[hitAt];
    li.classList.add('search-here');
    revealRow(li);
    tlHits.textContent = `${hitAt + 1} of ${hits.length} match${hits.length === 1 ? '' : 'es'}`;
    tlHits.dataset.at = li.dataset.i;
  }
  function stepHit(d) {
    if (!hits.length) runSearch();
    else jumpTo(hitAt + d);
  }
  let searchTimer = null;
  tlSearch.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(runSearch, 200);
  });
  tlPrev.addEventListener('click', () => stepHit(-1));
  tlNext.addEventListener('click', () => stepHit(1));
  tlJump.addEventListener('change', () => {
    if (!tlJump.value) return;
    tlSearch.value = tlJump.value;
    tlJump.value = '';
    runSearch();
  });
  /** The jump list from what the entries hold (rebuilt when they grow). */
  let jumpSig = '';
  function fillJump() {
    const tools = new Set();
    const who = new Set();
    const tasks = new Set();
    const days = new Set();
    let errors = 0;
    for (const e of st.entries) {
      const ev = e.event || {};
      if (e.type === 'result' && e.result) {
        tools.add(e.result.tool);
        if (!e.result.ok) errors++;
      }
      if (e.type === 'event' && ev.kind === 'deliver' && ev.from) who.add(ev.from);
      if (e.type === 'npc' && e.npc) who.add(e.npc);
      if (e.type === 'event' && ev.kind === 'release' && ev.task) tasks.add(ev.task);
      if (e.type === 'event' && ev.kind === 'day_start') days.add(ev.day);
    }
    const sig = JSON.stringify([errors, [...tools], [...who], [...tasks], [...days]]);
    if (sig === jumpSig) return;
    jumpSig = sig;
    const group = (label, values, prefix, show = (v) => v) => values.length
      ? h('optgroup', { label }, [...values].sort(NATURAL.compare).map((v) => h('option', { value: `${prefix}${v}` }, show(v)))) : null;
    clear(tlJump).append(h('option', { value: '' }, 'Jump to…'),
      errors ? h('option', { value: 'error:' }, `Errors (${errors})`) : null,
      group('Days', [...days].map(String), 'day:', (d) => `Day ${d}`),
      group('Tools', [...tools].filter(Boolean), 'tool:'),
      group('Colleagues', [...who].map((k) => String(k)), 'from:', (k) => displayName(k)),
      group('Tasks', [...tasks], 'task:', (k) => displayName(k)));
  }

  // Highlight what happened up to the scrubbed step; with `scroll`, bring the
  // step's decision into the timeline's view.
  // The rows by step, kept as the timeline grows: a scrub then touches only the
  // rows between the old step and the new one (a long run has thousands).
  const hl = { rows: [], steps: [], decisions: new Map(), boundary: null, current: null };
  function indexRows() {
    const lis = timeline.children;
    const from = hl.rows.length;
    for (let k = from; k < lis.length; k++) {
      const li = lis[k];
      const s = li.dataset.step === '' ? null : Number(li.dataset.step);
      li.tbRow = k;
      hl.rows.push(li);
      // The highest step seen so far, per row: rows without a step follow the last.
      const prevMax = k ? hl.steps[k - 1] : -1;
      hl.steps.push(s === null ? prevMax : Math.max(prevMax, s));
      if (s !== null && li.dataset.type === 'decision' && !hl.decisions.has(s)) hl.decisions.set(s, li);
      // A row drawn after the boundary is past the step shown.
      if (hl.boundary !== null && k >= hl.boundary) li.classList.add('future');
    }
    if (hl.rows.length > from) bandGrew(from);
  }
  /** The first row whose step (or the last step before it) is after step `n`. */
  function boundaryOf(n) {
    let lo = 0;
    let hi = hl.rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (hl.steps[mid] > n) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  function highlight(scroll, deepLink = false) {
    indexRows();
    const n = st.scrub;
    const was = hl.boundary === null ? hl.rows.length : hl.boundary;
    const now = n === null ? hl.rows.length : boundaryOf(n);
    for (let k = Math.min(was, now); k < Math.max(was, now); k++) hl.rows[k].classList.toggle('future', k >= now);
    hl.boundary = n === null ? null : now;
    const current = n === null ? null : (hl.decisions.get(n) || null);
    if (hl.current !== current) {
      if (hl.current) hl.current.classList.remove('current');
      if (current) current.classList.add('current');
      hl.current = current;
    }
    if (scroll && current) revealRow(current, deepLink);
    return current !== null;
  }

  // --- The band: a long timeline draws only the rows near its view. The others are
  // hidden="until-found" (app.css): not laid out or painted, kept at the height they
  // had when last drawn, still found by the browser's find (which shows them). With
  // every row drawn, or left to content-visibility: auto, each frame of a scrub cost
  // the browser 20-30 ms over 6,742 rows; now a frame touches the band only. Any
  // row shown or hidden has the browser place all the rows again (tens of ms on a
  // long run), so the band grows in steps as the view moves and is cut back to
  // the view once the view rests.
  const BAND_FROM = 300; // rows: a timeline this short is drawn whole
  const BAND = 60; // rows drawn either side of those in view
  const BAND_MAX = 400; // rows drawn at most once the view rests
  const band = { on: false, lo: 0, hi: 0, strays: new Set(), trim: null };
  const hideRow = (li) => li.setAttribute('hidden', 'until-found');
  /** Draws rows lo..hi (clamped) and hides the band's other rows. */
  function showRows(lo, hi) {
    const rows = hl.rows;
    lo = Math.max(0, lo);
    hi = Math.min(rows.length, hi);
    for (let k = band.lo; k < band.hi; k++) if (k < lo || k >= hi) hideRow(rows[k]);
    for (let k = lo; k < hi; k++) if (k < band.lo || k >= band.hi) rows[k].removeAttribute('hidden');
    // Rows the browser's find showed, out of the band now.
    for (const li of band.strays) if (li.tbRow < lo || li.tbRow >= hi) hideRow(li);
    band.strays.clear();
    band.lo = lo;
    band.hi = hi;
  }
  timeline.addEventListener('beforematch', (ev) => { if (band.on) band.strays.add(ev.target); });
  /** Draws rows lo..hi too: the band grows when they touch it, else moves there. */
  function bandTo(lo, hi) {
    if (hi < band.lo || lo > band.hi) showRows(lo, hi);
    else showRows(Math.min(lo, band.lo), Math.max(hi, band.hi));
    clearTimeout(band.trim);
    if (band.hi - band.lo > BAND_MAX) band.trim = setTimeout(trimBand, 600);
  }
  function trimBand() {
    if (st.gone || !band.on || tlPane.hidden || !tlBox.clientHeight) return;
    const [a, b] = rowsInView();
    showRows(a - BAND, b + BAND + 1);
  }
  onCleanup(() => clearTimeout(band.trim));
  /** New rows from index `from`: drawn while the box follows the latest step. */
  function bandGrew(from) {
    const rows = hl.rows;
    const follow = st.scrub === null;
    if (!band.on) {
      if (rows.length <= BAND_FROM) return;
      band.on = true;
      // Until the view says where it is: the rows at the end, where a run opens.
      band.lo = 0;
      band.hi = rows.length;
      if (follow) showRows(rows.length - (2 * BAND + 60), rows.length);
      scheduleBand();
      return;
    }
    for (let k = from; k < rows.length; k++) hideRow(rows[k]);
    if (follow && band.hi >= from) showRows(Math.max(band.lo, rows.length - (2 * BAND + 60)), rows.length);
  }
  /** The rows in the box's view: [first, last] indexes (layout read once). */
  function rowsInView() {
    const rows = hl.rows;
    const top = tlBox.scrollTop;
    const bottom = top + tlBox.clientHeight;
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid].offsetTop + rows[mid].offsetHeight <= top) lo = mid + 1;
      else hi = mid;
    }
    const first = lo;
    hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rows[mid].offsetTop < bottom) lo = mid + 1;
      else hi = mid;
    }
    return [first, Math.max(first, lo - 1)];
  }
  /** Moves the band to the view, when the view nears one of its edges. */
  function syncBand() {
    if (!band.on || tlPane.hidden || !tlBox.clientHeight || tlBox.offsetParent === null) return;
    const [a, b] = rowsInView();
    const n = hl.rows.length;
    const nearTop = band.lo > 0 && a < band.lo + BAND / 2;
    const nearEnd = band.hi < n && b > band.hi - BAND / 2;
    if (nearTop || nearEnd || a >= band.hi || b < band.lo) bandTo(a - BAND, b + BAND + 1);
  }
  let bandFrame = 0;
  function scheduleBand() {
    if (!bandFrame) bandFrame = requestAnimationFrame(() => { bandFrame = 0; if (!st.gone) syncBand(); });
  }
  // On the scroll itself (not a frame later): the rows come into view drawn.
  tlBox.addEventListener('scroll', syncBand, { passive: true });
  window.addEventListener('resize', scheduleBand);
  onCleanup(() => { window.removeEventListener('resize', scheduleBand); cancelAnimationFrame(bandFrame); });

  // Bring a row to a third of the way down the timeline's box, unless it is well
  // inside the box's view already (a step at a time, the box moves every few steps,
  // not at each). Within the box only (scrollIntoView would move the page too);
  // with `onPage`, a step from the
  // address, the page too, so the row is on screen (on a phone the box starts below
  // the run's header and scrubber). The band is moved to the row first, so the
  // rows above it are at their own heights and one scroll lands on it; the next
  // frame checks it stayed (fonts, a row drawn late).
  const reveal = { li: null, onPage: false, frame: 0, still: 0, frames: 0 };
  function revealRow(li, onPage = false) {
    reveal.li = li;
    reveal.onPage = reveal.onPage || onPage;
    reveal.still = 0;
    reveal.frames = 0;
    cancelAnimationFrame(reveal.frame);
    placeRow();
  }
  function placeRow() {
    reveal.frame = 0;
    const row = reveal.li;
    if (st.gone || !row || !row.isConnected || tlPane.hidden) return;
    if (band.on && (row.tbRow < band.lo + 20 || row.tbRow >= band.hi - 40)) bandTo(row.tbRow - BAND - 20, row.tbRow + BAND + 40);
    const r0 = row.getBoundingClientRect();
    const at = r0.top - tlBox.getBoundingClientRect().top - tlBox.clientTop;
    const before = tlBox.scrollTop;
    const want = Math.round(at - tlBox.clientHeight / 3);
    const inside = at >= tlBox.clientHeight * 0.15 && at + r0.height <= tlBox.clientHeight * 0.8;
    if (!inside && Math.abs(want) > 1) tlBox.scrollTop = Math.max(0, before + want);
    const moved = Math.abs(tlBox.scrollTop - before) > 1;
    if (reveal.onPage) {
      const r = row.getBoundingClientRect();
      if (r.top < 0 || r.bottom > window.innerHeight) window.scrollBy(0, r.top - window.innerHeight / 3);
    }
    reveal.still = moved ? 0 : reveal.still + 1;
    if (reveal.still < 1 && ++reveal.frames < 10) reveal.frame = requestAnimationFrame(placeRow);
    else {
      reveal.li = null;
      reveal.onPage = false;
    }
  }
  onCleanup(() => cancelAnimationFrame(reveal.frame));
  // The reader scrolling the box takes over from a reveal still settling.
  const stopReveal = () => {
    reveal.li = null;
    reveal.onPage = false;
  };
  for (const type of ['wheel', 'touchstart', 'pointerdown', 'keydown']) tlBox.addEventListener(type, stopReveal, { passive: true });

  /** The step in the address (`#/run/<id>/step/<n>`), without a new history entry. */
  function stepUrl(n) {
    const hash = n === null ? `#/run/${enc}` : `#/run/${enc}/step/${n}`;
    if (location.hash !== hash) history.replaceState(null, '', hash);
  }

  // Clicking an entry moves the scrubber to its step (not when the click opens a
  // transcript, a block of JSON or a link).
  timeline.addEventListener('click', (ev) => {
    const t = ev.target;
    if (t.closest('a, button, summary, details, input, select, textarea')) return;
    const li = t.closest('li.entry');
    if (!li || li.dataset.step === '') return;
    scrubTo(Number(li.dataset.step), false);
  });

  // World.
  function scheduleWorld() {
    if (st.worldTimer) return;
    st.worldTimer = setTimeout(() => {
      st.worldTimer = null;
      loadWorld();
    }, 150);
  }
  onCleanup(() => st.worldTimer && clearTimeout(st.worldTimer));

  /**
   * Draws the world of the step shown; `quiet`: an error is not shown (asked before
   * the run's state is known). One request at a time: asked while one is on its
   * way, the world of the step then shown is asked when it ends (a drag's steps
   * between are skipped, not queued). Resolves with whether the last one drew.
   */
  const wl = { busy: null, again: false, quiet: true };
  function loadWorld(quiet = false) {
    // A player sees the world through the tools; a queued job has none yet.
    if (st.playing || st.locked || (st.detail && st.detail.state === 'queued')) return Promise.resolve(false);
    if (wl.busy) {
      wl.again = true;
      wl.quiet = wl.quiet && quiet;
      return wl.busy;
    }
    wl.quiet = quiet;
    wl.busy = (async () => {
      let drawn = false;
      do {
        wl.again = false;
        const q = [];
        if (st.scrub !== null) q.push(`step=${st.scrub}`);
        if (st.answers) q.push('answers=1');
        // The world held, when it has no answers and the server named it: the answer
        // may then be only what changed since (world_delta.rs).
        const held = st.world;
        const heldId = held && !st.answers ? worldIds.get(held) : undefined;
        if (heldId) q.push(`since=${held.step}`, `since_id=${encodeURIComponent(heldId)}`);
        try {
          let w = await api(`${base}/world${q.length ? `?${q.join('&')}` : ''}`);
          if (st.gone) break;
          if (w && w.delta_since !== undefined) w = applyWorldDelta(held, w);
          st.world = w;
          renderWorld(w);
          drawn = true;
        } catch (e) {
          drawn = false;
          if (!wl.again && !wl.quiet) showError(e);
        }
        wl.quiet = false;
      } while (wl.again && !st.gone);
      wl.busy = null;
      return drawn;
    })();
    return wl.busy;
  }

  /** The line above the world's tabs (the run's step count may come after the world). */
  function renderWorldNote(w) {
    worldNote.textContent = `World after step ${w.step} of ${maxStep()} · ${w.time} · day ${w.day}/${w.days} · score ${fmtScore(w.score)}`;
    worldNote.dataset.step = String(w.step);
    updateScrubLabel();
  }

  // What each panel was last drawn from (JSON): a step that leaves a part of the
  // world as it was redraws nothing there (a scrub changes a task or two, if any).
  const drawnFrom = {};
  // The very data last drawn (a world built from a delta shares its unchanged
  // parts): nothing to write out and compare then.
  const drawnData = {};
  /** Draws panel `key` (now if shown, else when shown) unless `data` is what it shows. */
  function drawPanelOf(key, data, draw) {
    drawPanel(key, () => {
      if (drawnData[key] === data) return;
      drawnData[key] = data;
      const sig = JSON.stringify(data);
      if (drawnFrom[key] === sig) return;
      drawnFrom[key] = sig;
      draw();
    });
  }
  // Task cards by key, each redrawn only when its task changed (an open card keeps
  // its state).
  const taskCards = new Map();
  function renderTasks(tasks) {
    if (!tasks.length) {
      taskCards.clear();
      if (!panels.tasks.querySelector('[data-testid="tasks-none"]')) clear(panels.tasks).append(h('p', { class: 'muted', testid: 'tasks-none' }, 'No task released yet.'));
      return;
    }
    let list = panels.tasks.querySelector('[data-testid="task-list"]');
    if (!list) {
      list = h('div', { class: 'task-list', testid: 'task-list' });
      clear(panels.tasks).append(list);
    }
    const seen = new Map();
    tasks.forEach((t, k) => {
      const key = t.key ?? `#${k}`;
      const sig = JSON.stringify(t);
      const had = taskCards.get(key);
      const el = had && had.sig === sig ? had.el : taskCard(t);
      seen.set(key, { sig, el });
      // In order: the cards of changed tasks end up after the list's, then go.
      if (list.children[k] !== el) list.insertBefore(el, list.children[k] || null);
    });
    while (list.children.length > tasks.length) list.lastElementChild.remove();
    taskCards.clear();
    for (const [k, v] of seen) taskCards.set(k, v);
  }

  function renderWorld(w) {
    learnNames(w);
    renderWorldNote(w);
    // Once the scrubber rests (replaceState cost each step of a scrub ~9 ms).
    if (st.scrub !== null && st.scrub === w.step) stepUrlSoon();
    renderTasks(w.tasks || []);
    const files = w.files || [];
    const openNow = fileViewer.dataset.path;
    if (openNow && !files.some((f) => f.path === openNow)) {
      clear(fileViewer);
      delete fileViewer.dataset.path;
    }
    // Drawn when shown, like chats: a long run's hundreds of files are a tenth of
    // its first paint otherwise.
    drawPanelOf('files', files, () => clear(panels.files).append(
      files.length ? h('div', { class: 'files', testid: 'file-tree', tabindex: '0', 'aria-label': 'Files, scrollable' }, ['drive', 'workspace'].map((root) => {
        const fs = files.filter((f) => (f.root || f.path.split('/')[0]) === root);
        return fs.length ? h('div', {}, fileTree(fs, openFile)) : null;
      })) : h('p', { class: 'muted' }, 'No files.'),
      fileViewer));
    const chats = w.chats || [];
    drawPanelOf('chats', chats, () => add(clear(panels.chats), [chats.length ? chats.map(chatView) : h('p', { class: 'muted' }, 'No chats.')]));
    drawPanelOf('calendar', w.calendar || [], () => clear(panels.calendar).append(calendarView(w.calendar || [])));
  }

  let fileUrl = null;
  async function openFile(f) {
    clear(fileViewer).append(h('p', { class: 'muted' }, `Loading ${f.path}…`));
    fileViewer.dataset.path = f.path;
    const step = st.world ? st.world.step : null;
    const url = `${base}/file?path=${encodeURIComponent(f.path)}${step !== null ? `&step=${step}` : ''}`;
    try {
      const res = await request(url);
      if (!res.ok) {
        let msg = res.statusText;
        try {
          const j = await res.json();
          msg = j.error ? `${j.error.code}: ${j.error.message}` : msg;
        } catch { /* keep the status text */ }
        throw new Error(msg);
      }
      const type = res.headers.get('content-type') || '';
      const headEl = h('h4', {}, f.path, h('span', { class: 'muted small' }, ` · ${f.bytes} B · ${type}`));
      if (fileUrl) URL.revokeObjectURL(fileUrl);
      fileUrl = null;
      if (f.kind === 'image' || type.startsWith('image/')) {
        fileUrl = URL.createObjectURL(await res.blob());
        clear(fileViewer).append(headEl, h('img', { src: fileUrl, alt: f.path, testid: 'file-image' }));
      } else if (f.kind === 'text' || type.startsWith('text/') || type.includes('json')) {
        clear(fileViewer).append(headEl, h('pre', { testid: 'file-text', tabindex: '0' }, await res.text()));
      } else {
        clear(fileViewer).append(headEl, h('p', { class: 'muted', testid: 'file-binary' }, 'A binary file: not shown.'));
      }
    } catch (e) {
      clear(fileViewer).append(h('p', { class: 'error', role: 'alert' }, `Cannot open ${f.path}: ${errorText(e)}`));
    }
  }
  onCleanup(() => fileUrl && URL.revokeObjectURL(fileUrl));

  // Scrubber.
  function updateScrubLabel() {
    const m = maxStep();
    const cur = st.scrub === null ? m : st.scrub;
    scrubLabel.textContent = `step ${cur} of ${m}${st.scrub === null ? ' (latest)' : ''}${st.world && st.world.step === cur ? ` · ${st.world.time}` : ''}`;
    scrubLabel.dataset.step = String(cur);
    prev.disabled = cur <= 0;
    nextB.disabled = cur >= m;
    latest.disabled = st.scrub === null;
  }

  // The address follows the step once the scrubber has rested: replaceState costs
  // several ms, which a drag paid at every input and "Next" at every step.
  let urlTimer = 0;
  function stepUrlSoon() {
    clearTimeout(urlTimer);
    urlTimer = setTimeout(() => { if (!st.gone) stepUrl(st.scrub); }, 300);
  }
  onCleanup(() => clearTimeout(urlTimer));
  // A drag's inputs come faster than a long timeline can follow (a frame that
  // marks and scrolls its rows costs tens of ms on a long run): its rows follow the
  // step then shown at most every FOLLOW_EVERY ms.
  const FOLLOW_EVERY = 120;
  const follow = { timer: 0, frame: 0, last: -Infinity };
  function followSoon() {
    if (follow.timer || follow.frame) return;
    follow.timer = setTimeout(() => {
      follow.timer = 0;
      follow.frame = requestAnimationFrame(() => {
        follow.frame = 0;
        follow.last = performance.now();
        if (!st.gone && st.scrub !== null) highlight(true);
      });
    }, Math.max(0, follow.last + FOLLOW_EVERY - performance.now()));
  }
  onCleanup(() => {
    clearTimeout(follow.timer);
    cancelAnimationFrame(follow.frame);
  });
  function scrubTo(n, scroll = true, soon = false) {
    const m = maxStep();
    n = Math.max(0, Math.min(m, n));
    // Following the latest again only for a run still going; a finished run's last
    // step is just a step.
    st.scrub = n;
    st.scrubbedAt = performance.now();
    if (st.pageAbort) st.pageAbort.abort();
    range.value = String(n);
    updateScrubLabel();
    // Classes of the rows between the two steps (paint only), and the scroll.
    if (soon) followSoon();
    else highlight(scroll);
    stepUrlSoon();
    // Asked at once; while a world is on its way, the latest step is asked after it.
    loadWorld();
  }
  range.addEventListener('input', () => scrubTo(Number(range.value), true, true));
  prev.addEventListener('click', () => scrubTo(currentStep() - 1));
  nextB.addEventListener('click', () => scrubTo(currentStep() + 1));
  latest.addEventListener('click', () => {
    st.scrub = null;
    stepUrl(null);
    range.value = String(maxStep());
    updateScrubLabel();
    highlight();
    loadWorld();
  });
  function currentStep() {
    return st.scrub === null ? maxStep() : st.scrub;
  }
  const onKey = (ev) => {
    if (ev.altKey || ev.ctrlKey || ev.metaKey) return;
    if (ev.key !== 'ArrowLeft' && ev.key !== 'ArrowRight') return;
    const t = ev.target;
    if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
    if (t && t.getAttribute && t.getAttribute('role') === 'tab') return;
    ev.preventDefault();
    scrubTo(currentStep() + (ev.key === 'ArrowRight' ? 1 : -1));
  };
  document.addEventListener('keydown', onKey);
  onCleanup(() => document.removeEventListener('keydown', onKey));

  // Fork.
  const forkChoices = [...(info.agents || []).map((a) => ({ value: a, label: a })), { value: 'human', label: 'me (play)' }];
  for (const c of forkChoices) forkAgent.append(h('option', { value: c.value }, c.label));
  if ((info.agents || []).includes('oracle')) forkAgent.value = 'oracle';
  const syncForkName = () => {
    forkNameField.hidden = forkAgent.value !== 'human';
  };
  forkAgent.addEventListener('change', syncForkName);
  syncForkName();
  forkBtn.addEventListener('click', async () => {
    let agent = forkAgent.value;
    if (agent === 'human') {
      const n = forkName.value.trim();
      if (!n) {
        forkMsg.textContent = 'Your name is needed to play.';
        forkMsg.className = 'form-msg error';
        forkName.focus();
        return;
      }
      store(NAME_KEY, n);
      agent = `human:${n}`;
    }
    const step = currentStep();
    forkMsg.textContent = `Forking at step ${step}…`;
    forkMsg.className = 'form-msg';
    try {
      const r = await api(`${base}/fork`, { method: 'POST', body: { step, agent } });
      go(`#/run/${encodeURIComponent(r.id)}`);
    } catch (e) {
      forkMsg.textContent = errorText(e);
      forkMsg.className = 'form-msg error';
    }
  });

  // Answers (view mode, finished runs).
  answersBox.addEventListener('change', () => {
    st.answers = answersBox.checked;
    loadAllTimeline();
    loadWorld();
  });

  // Play.
  async function loadTools() {
    try {
      const r = await api('/v1/tools');
      const list = Array.isArray(r) ? r : (r && r.tools) || [];
      st.tools = list;
      st.toolMap = Object.fromEntries(list.map((t) => [t.name, t]));
      st.ctx.tools = st.toolMap;
      clear(toolSelect);
      for (const t of list) toolSelect.append(h('option', { value: t.name }, `${t.name}${t.family ? ` (${t.family})` : ''}`));
      toolSelect.value = list.some((t) => t.name === 'my_tasks') ? 'my_tasks' : (list[0] && list[0].name);
      renderToolForm();
    } catch (e) {
      playMsg.textContent = `Cannot load the tools: ${errorText(e)}`;
      playMsg.className = 'form-msg error';
    }
  }
  toolSelect.addEventListener('change', renderToolForm);
  function renderToolForm() {
    const t = st.toolMap && st.toolMap[toolSelect.value];
    clear(toolHolder);
    if (t) toolHolder.append(toolForm(t, act));
  }

  let loadingTurn = false;
  async function loadTurn() {
    if (loadingTurn) return;
    loadingTurn = true;
    try {
      showTurn(await api(`${base}/turn`));
    } catch (e) {
      playMsg.textContent = errorText(e);
      playMsg.className = 'form-msg error';
    } finally {
      loadingTurn = false;
    }
  }
  let recapDone = false;
  async function loadHistory() {
    try {
      const r = await api(`${base}/history`);
      const cur = st.turn && st.turn.observation ? st.turn.observation.step : null;
      const past = (r.turns || []).filter((t) => !t.observation || t.observation.step !== cur);
      clear(histList).append(...past.map((t, k) => h('li', { class: 'history-turn', testid: 'history-turn', 'data-step': t.observation ? t.observation.step : '' },
        h('details', { open: k >= past.length - 2 }, h('summary', {}, `After step ${t.observation ? t.observation.step : '?'} · ${(t.observation || {}).time || ''}`),
          h('div', { class: 'turn past' }, observationView(t))))));
      histBox.hidden = past.length === 0;
      if (!recapDone && (r.recap || []).length) {
        recapDone = true;
        const ctx = newCtx(st.toolMap);
        const fork = st.detail && st.detail.fork;
        recapBox.append(h('summary', {}, `Recap: steps 1–${fork ? fork.step : '…'} before the fork (${r.recap.filter((e) => e.type === 'decision').length} decisions)`),
          h('ol', { class: 'timeline recap-list' }, r.recap.map((e) => entryView(e, ctx))));
        recapBox.hidden = false;
      }
    } catch {
      /* the turn itself is shown; the history comes with the next one */
    }
  }
  function showTurn(turn) {
    st.turn = turn;
    loadHistory();
    const o = (turn && turn.observation) || {};
    turnView.dataset.step = String(o.step ?? 0);
    turnView.dataset.over = String(!!(turn && (turn.terminated || turn.truncated)));
    add(clear(turnView), observationView(turn));
  }

  async function act(args, submit) {
    const name = toolSelect.value;
    submit.disabled = true;
    playMsg.textContent = `Calling ${name}…`;
    playMsg.className = 'form-msg';
    try {
      const turn = await api(`${base}/act`, { method: 'POST', body: { tool_calls: [{ name, arguments: args }] } });
      showTurn(turn);
      const r = ((turn.observation || {}).results || [])[0];
      playMsg.textContent = r && !r.ok ? `${name} failed: ${r.error ? `${r.error.kind}: ${r.error.message}` : 'error'}` : `${name} done.`;
      playMsg.className = r && !r.ok ? 'form-msg error' : 'form-msg ok';
      renderToolForm();
      refreshDetail();
      if (st.scrub === null) scheduleWorld();
    } catch (e) {
      playMsg.textContent = errorText(e);
      playMsg.className = 'form-msg error';
    } finally {
      submit.disabled = false;
    }
  }

  // --- start: the tools, the run, its timeline so far and its world are asked
  // for at once (the world at the address's step, else the latest).
  (async () => {
    const quiet = (p) => p.then((v) => ({ v }), (e) => ({ e }));
    const detailP = quiet(api(base));
    // A first page only: a long run's first paint parses and draws this much.
    const timelineP = quiet(api(`${base}/timeline?from=0&limit=${TIMELINE_FIRST_PAGE}`));
    if (atStep !== null) st.scrub = Math.max(0, atStep);
    const worldP = loadWorld(true);
    await loadTools();
    // The timeline's first page is drawn as soon as it comes (the detail of a
    // long run may take a replay); the stream goes on after the pages (refused
    // while a person plays: the stream says so).
    // The rows are drawn as soon as they are here, whether the world is drawn yet or
    // not: a first page is 40 rows (cheap to lay out beside the world), and waiting
    // for the world's frame first cost the rows a whole frame, 100-200 ms on a
    // loaded machine.
    const t = await timelineP;
    if (st.gone) return;
    let rest = Promise.resolve();
    const firstPage = t.v && !st.answers && st.next === 0;
    if (firstPage) {
      appendEntries(t.v.lines || []);
      st.next = Math.max(st.next, t.v.next ?? 0);
    }
    const d = await detailP;
    if (d.e) {
      showError(d.e);
      return;
    }
    applyDetail(d.v);
    if (st.detail && st.detail.state === 'finished') st.ended = false;
    if (atStep !== null) {
      st.scrub = Math.max(0, Math.min(maxStep(), atStep));
      st.scrollPending = true;
      range.value = String(st.scrub);
      updateScrubLabel();
      if (highlight(true, true)) st.scrollPending = false;
    }
    if (firstPage) rest = loadRestOfTimeline(t.v);
    // The stream goes on from where the pages end.
    rest.catch(showError).then(() => { if (!st.gone) startStream(); });
    // Its note again, with the run's step count, which came later (the panels do
    // not depend on it); or asked again (with its error shown) unless the run has
    // no world to show.
    if (await worldP) renderWorldNote(st.world);
    else if (!st.playing && !(st.detail && st.detail.state === 'queued')) loadWorld();
  })();
}

// ---------------------------------------------------------------------------

boot();
