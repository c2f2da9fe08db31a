// The compare view (#/compare/runs/<id>,<id>… and #/compare/batches/<name>,<name>…)
// and the runs list's "select for compare" action. Everything it shows comes from
// GET /v1/console/compare, computed by the server (divergence, paired comparison
// with its intervals); nothing is computed here. It uses app.js's helpers (h, api,
// clear, fmtScore, errorText), which are loaded by the time a view is drawn.

'use strict';

(() => {
  const selected = new Set();
  const listeners = new Set();

  function changed() {
    for (const f of listeners) f();
  }

  /** The address of a comparison. */
  function href(kind, names) {
    return `#/compare/${kind}/${names.map(encodeURIComponent).join(',')}`;
  }

  /** Makes `box` (a checkbox cloned into a runs list row) select run `r`, as
   * `selectCell` does. */
  function fillSelectCell(box, r) {
    box.dataset.testid = `compare-select-${r.id}`;
    box.checked = selected.has(r.id);
    box.setAttribute('aria-label', `Select ${r.id} for comparison`);
    box.disabled = r.state === 'queued';
    box.addEventListener('change', () => {
      if (box.checked) selected.add(r.id);
      else selected.delete(r.id);
      changed();
    });
  }

  /** A checkbox cell for the runs list: select the run for comparison. */
  function selectCell(r) {
    const box = h('input', {
      type: 'checkbox',
      testid: `compare-select-${r.id}`,
      checked: selected.has(r.id),
      'aria-label': `Select ${r.id} for comparison`,
      disabled: r.state === 'queued',
    });
    box.addEventListener('change', () => {
      if (box.checked) selected.add(r.id);
      else selected.delete(r.id);
      changed();
    });
    return h('td', { 'data-label': 'Compare', class: 'compare-cell' }, box);
  }

  /** The bar above the runs list: compare the selected runs, or two batches. */
  function bar() {
    const go = h('a', { class: 'button', testid: 'compare-selected', role: 'button' }, 'Compare selected');
    const note = h('span', { class: 'muted small', testid: 'compare-count' });
    const batchA = h('select', { testid: 'compare-batch-a', 'aria-label': 'Baseline batch' });
    const batchB = h('select', { testid: 'compare-batch-b', 'aria-label': 'Batch to compare' });
    const goBatch = h('a', { class: 'button', testid: 'compare-batches', role: 'button' }, 'Compare batches');
    const batchWrap = h('span', { class: 'inline-field', hidden: true }, batchA, ' vs ', batchB, goBatch);
    const el = h('div', { class: 'controls compare-bar', role: 'group', 'aria-label': 'Compare', testid: 'compare-bar' }, go, note, batchWrap);
    let batches = [];
    const sync = () => {
      const ids = [...selected];
      const ok = ids.length >= 2 && ids.length <= 8;
      note.textContent = ids.length ? `${ids.length} selected${ids.length > 8 ? ' (at most 8)' : ''}` : 'Tick two or more runs to compare them';
      if (ok) go.setAttribute('href', href('runs', ids));
      else go.removeAttribute('href');
      go.setAttribute('aria-disabled', String(!ok));
      const a = batchA.value;
      const b = batchB.value;
      const bok = a && b && a !== b;
      if (bok) goBatch.setAttribute('href', href('batches', [a, b]));
      else goBatch.removeAttribute('href');
      goBatch.setAttribute('aria-disabled', String(!bok));
    };
    batchA.addEventListener('change', sync);
    batchB.addEventListener('change', sync);
    listeners.add(sync);
    /** Called with the runs listed: offers their batches (id prefixes). */
    el.update = (runs) => {
      for (const id of [...selected]) if (!runs.some((r) => r.id === id)) selected.delete(id);
      // A batch is the folder a run was written under (`batch`: a `--trials`
      // folder's scenarios are one batch, not one each), named as id prefixes are.
      const seen = [];
      for (const r of runs) {
        if (r.kind !== 'recorded') continue;
        let b = r.batch ? r.batch.replace(/\//g, ':') : null;
        if (b && !(r.id === b || r.id.startsWith(`${b}:`))) b = null;
        if (!b) {
          const k = r.id.lastIndexOf(':');
          b = k > 0 ? r.id.slice(0, k) : null;
        }
        if (b && !seen.includes(b)) seen.push(b);
      }
      if (seen.join('\n') !== batches.join('\n')) {
        batches = seen;
        for (const s of [batchA, batchB]) {
          const cur = s.value;
          clear(s);
          for (const b of batches) s.append(h('option', { value: b }, b));
          if (batches.includes(cur)) s.value = cur;
        }
        if (batchB.value === batchA.value && batches.length > 1) batchB.value = batches[1];
      }
      batchWrap.hidden = batches.length < 2;
      sync();
    };
    el.dispose = () => listeners.delete(sync);
    sync();
    return el;
  }

  const CP_MARK = { passed: '✓ passed', failed: '✗ failed', pending: '… pending' };

  function runLink(id, step) {
    const e = encodeURIComponent(id);
    return h('a', { href: step ? `#/run/${e}/step/${step}` : `#/run/${e}` }, step ? `step ${step}` : id);
  }

  function callsText(calls) {
    if (!calls) return h('span', { class: 'muted' }, '(no decision)');
    if (!calls.length) return h('span', { class: 'muted' }, 'no calls');
    return calls.map((c) => h('div', { class: 'call' }, h('span', { class: 'tool' }, c.name), ' ', h('code', { class: 'json' }, c.args.length > 200 ? `${c.args.slice(0, 200)}…` : c.args)));
  }

  function runsTable(c) {
    const cols = c.runs;
    const row = (label, f, testid) => h('tr', { testid }, h('th', { scope: 'row' }, label), cols.map((r, i) => h('td', {}, f(r, i))));
    return h('table', { class: 'runs compare-runs', testid: 'compare-runs' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, ''), cols.map((r, i) => h('th', { scope: 'col' }, i === 0 ? 'A (baseline)' : String.fromCharCode(65 + i))))),
      h('tbody', {},
        row('Run', (r) => runLink(r.id)),
        row('Scenario', (r) => r.scenario),
        row('Agent', (r) => r.agent),
        row('Seed · hints', (r) => `${r.seed} · ${r.hints}`),
        row('Steps', (r) => String(r.steps)),
        row('Score', (r) => h('span', { testid: 'compare-score', 'data-score': r.score }, fmtScore(r.score))),
        row('Ended', (r) => (r.finished ? (r.end_reason || 'yes') : 'not yet')),
        row('Diverges from A at', (r, i) => (i === 0 ? '—' : r.diverges_at ? runLink(r.id, r.diverges_at) : 'never'), 'compare-diverges')));
  }

  function tasksTable(c, onlyDiff) {
    const body = h('tbody', {});
    for (const t of c.tasks) {
      if (onlyDiff && !t.differs) continue;
      body.append(h('tr', { class: `task-row${t.differs ? ' differs' : ''}`, testid: `compare-task-${t.key}` },
        h('th', { scope: 'row' }, h('strong', {}, t.key), t.title ? h('span', { class: 'muted small' }, ` ${t.title}`) : null),
        t.scores.map((s) => h('td', { class: 'num' }, s === null ? h('span', { class: 'muted' }, 'not released') : fmtScore(s)))));
      for (const cp of t.checkpoints) {
        if (onlyDiff && !cp.differs) continue;
        body.append(h('tr', { class: `cp-row${cp.differs ? ' differs' : ''}`, testid: 'compare-checkpoint', 'data-differs': String(cp.differs) },
          h('th', { scope: 'row', class: 'cp-name' }, `# ${cp.key}`),
          cp.states.map((s) => h('td', { class: `cp-${s || 'none'}` }, s ? CP_MARK[s] || s : '–'))));
      }
    }
    return h('table', { class: 'runs compare-tasks', testid: 'compare-tasks' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Task / checkpoint'), c.runs.map((r, i) => h('th', { scope: 'col' }, `${String.fromCharCode(65 + i)} · ${r.agent}`)))),
      body);
  }

  function stepsTable(c) {
    const body = h('tbody', {});
    for (const s of c.steps) {
      const first = s.step === c.divergence;
      body.append(h('tr', {
        class: `step-row${s.differs ? ' differs' : ''}${first ? ' diverge' : ''}`,
        testid: first ? 'divergence-row' : 'compare-step',
        'data-step': s.step,
        'data-differs': String(s.differs),
      },
      h('th', { scope: 'row' }, String(s.step), first ? h('span', { class: 'badge diverge-badge' }, 'first divergence') : null),
      s.calls.map((calls, i) => h('td', {}, callsText(calls), calls ? h('div', { class: 'small' }, runLink(c.runs[i].id, s.step)) : null))));
    }
    return h('table', { class: 'runs compare-steps', testid: 'compare-steps' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Step'), c.runs.map((r, i) => h('th', { scope: 'col' }, `${String.fromCharCode(65 + i)} · ${r.id}`)))),
      body);
  }

  function drawRuns(main, c) {
    const summary = c.divergence
      ? h('p', { class: 'diverge-note', testid: 'divergence', 'data-step': c.divergence }, h('strong', {}, `The decisions first diverge at step ${c.divergence}.`), ' ', h('a', { href: '#diverge', testid: 'divergence-jump' }, 'Show it'))
      : h('p', { testid: 'divergence', 'data-step': '' }, 'The decisions never diverge: every step made the same tool calls.');
    const onlyDiff = h('input', { type: 'checkbox', id: 'only-diff', testid: 'only-diff' });
    const tasksBox = h('div', {}, tasksTable(c, false));
    onlyDiff.addEventListener('change', () => clear(tasksBox).append(tasksTable(c, onlyDiff.checked)));
    const steps = stepsTable(c);
    const stepsBox = h('div', { class: 'timeline-box compare-steps-box', tabindex: '0', 'aria-label': 'Decisions by step, scrollable' }, steps);
    add(main, [
      c.same_scenario ? null : h('p', { class: 'error', testid: 'compare-mixed' }, 'These runs are of different scenarios: tasks and steps are not the same world.'),
      h('section', { class: 'card', 'aria-labelledby': 'cmp-runs-h' }, h('h2', { id: 'cmp-runs-h' }, 'Runs'), runsTable(c)),
      h('section', { class: 'card', 'aria-labelledby': 'cmp-div-h' }, h('h2', { id: 'cmp-div-h' }, 'Divergence'), summary,
        h('details', {}, h('summary', {}, 'How divergence is defined'), h('p', { class: 'small', testid: 'divergence-definition' }, c.definition))),
      h('section', { class: 'card', 'aria-labelledby': 'cmp-tasks-h' }, h('h2', { id: 'cmp-tasks-h' }, 'Tasks and checkpoints'),
        h('div', { class: 'field check' }, onlyDiff, h('label', { for: 'only-diff' }, 'Only what differs')), tasksBox),
      h('section', { class: 'card', id: 'diverge', 'aria-labelledby': 'cmp-steps-h' }, h('h2', { id: 'cmp-steps-h' }, 'Decisions, aligned by step'), stepsBox)]);
    const row = steps.querySelector('[data-testid="divergence-row"]');
    const reveal = () => {
      if (row) stepsBox.scrollTop = Math.max(0, row.offsetTop - stepsBox.clientHeight / 3);
    };
    const jump = main.querySelector('[data-testid="divergence-jump"]');
    if (jump) {
      jump.addEventListener('click', (ev) => {
        ev.preventDefault();
        stepsBox.scrollIntoView({ block: 'start' });
        reveal();
      });
    }
    setTimeout(reveal, 0);
  }

  const num = (x, d = 3) => (typeof x === 'number' && isFinite(x) ? x.toFixed(d) : '–');

  function drawBatches(main, c) {
    const rows = [];
    for (const k of c.comparison.contrasts) {
      for (const [label, d] of [['checkpoint score', k.score], ['success rate', k.success]]) {
        rows.push(h('tr', { testid: 'contrast-row' },
          h('td', {}, k.a), h('td', {}, k.b), h('td', {}, label), h('td', { class: 'num' }, String(k.pairs)),
          h('td', { class: 'num' }, `${k.unpaired_a}/${k.unpaired_b}`),
          h('td', { class: 'num' }, num(d.mean_a)), h('td', { class: 'num' }, num(d.mean_b)),
          h('td', { class: 'num', testid: 'contrast-diff' }, num(d.diff)),
          h('td', { class: 'num', testid: 'contrast-ci' }, `[${num(d.ci_low)}, ${num(d.ci_high)}]`),
          h('td', { class: 'num' }, d.p_value === null ? '–' : `${num(d.p_value, 4)}${d.exact ? ' (exact)' : ''}`),
          h('td', { class: 'num' }, num(d.mdd))));
      }
    }
    const fam = [];
    for (const k of c.comparison.contrasts) {
      for (const f of k.families) {
        fam.push(h('tr', {}, h('td', {}, `${k.b} − ${k.a}`), h('td', {}, f.family), h('td', { class: 'num' }, String(f.tasks)), h('td', { class: 'num' }, num(f.mean_a)), h('td', { class: 'num' }, num(f.mean_b)), h('td', { class: 'num' }, num(f.diff))));
      }
    }
    const noise = c.comparison.noise.map((n) => h('tr', {}, h('td', {}, n.group), h('td', { class: 'num' }, String(n.trials)), h('td', { class: 'num' }, String(n.scenarios)), h('td', { class: 'num' }, num(n.sd_of_means)), h('td', { class: 'num' }, num(n.range)), h('td', { class: 'num' }, num(n.run_sd))));
    const head = (cols) => h('thead', {}, h('tr', {}, cols.map((x) => h('th', { scope: 'col' }, x))));
    // Per scenario: the mean of each side's paired runs, a bar of B − A, and the
    // pairs themselves (links to both runs).
    const scen = c.scenarios || [];
    const top = Math.max(1e-9, ...scen.map((r) => Math.abs(r.diff)));
    const scenRows = scen.map((r) => {
      const bar = h('span', { class: `diff-bar ${r.diff >= 0 ? 'up' : 'down'}` });
      // Through the style object: the page's CSP refuses style attributes.
      bar.style.width = `${Math.round((Math.abs(r.diff) / top) * 50)}%`;
      return h('tr', { testid: 'scenario-row', 'data-scenario': r.scenario, 'data-diff': r.diff },
        h('th', { scope: 'row' }, r.scenario), h('td', {}, r.batch), h('td', { class: 'num' }, String(r.pairs.length)),
        h('td', { class: 'num' }, num(r.mean_a)), h('td', { class: 'num' }, num(r.mean_b)), h('td', { class: 'num' }, num(r.diff)),
        h('td', { class: 'diff-chart', testid: 'scenario-chart', 'aria-hidden': 'true' }, h('span', { class: 'diff-axis' }), bar),
        h('td', {}, h('details', {}, h('summary', {}, `${r.pairs.length} pair${r.pairs.length === 1 ? '' : 's'}`),
          h('ul', { class: 'pair-list' }, r.pairs.map((p) => h('li', { testid: 'pair' }, `seed ${p.seed} trial ${p.trial}: `,
            h('a', { href: `#/run/${encodeURIComponent(p.a.id)}`, testid: 'pair-a' }, `${p.a.id} (${num(p.a.score, 2)})`), ' vs ',
            h('a', { href: `#/run/${encodeURIComponent(p.b.id)}`, testid: 'pair-b' }, `${p.b.id} (${num(p.b.score, 2)})`), ' · ',
            h('a', { href: href('runs', [p.a.id, p.b.id]) }, 'compare')))))));
    });
    add(main, [
      h('p', { class: 'muted small' }, c.batches.map((b, i) => `${b}: ${c.runs[i]} finished run${c.runs[i] === 1 ? '' : 's'}`).join(' · ')),
      h('section', { class: 'card', 'aria-labelledby': 'cmp-b-h' }, h('h2', { id: 'cmp-b-h' }, 'Paired difference (B − A)'),
        h('table', { class: 'runs', testid: 'compare-contrasts' }, head(['A', 'B', 'measure', 'pairs', 'unpaired A/B', 'mean A', 'mean B', 'B − A', '95% interval', 'p', 'MDD']), h('tbody', {}, rows)),
        h('p', { class: 'muted small', testid: 'compare-note' }, c.note)),
      scenRows.length ? h('section', { class: 'card', 'aria-labelledby': 'cmp-s-h' }, h('h2', { id: 'cmp-s-h' }, 'By scenario'),
        h('div', { class: 'runs-scroll' }, h('table', { class: 'runs', testid: 'compare-scenarios' }, head(['scenario', 'batch', 'pairs', 'mean A', 'mean B', 'B − A', 'chart (B − A)', 'runs']), h('tbody', {}, scenRows)))) : null,
      fam.length ? h('section', { class: 'card', 'aria-labelledby': 'cmp-f-h' }, h('h2', { id: 'cmp-f-h' }, 'By family'),
        h('table', { class: 'runs', testid: 'compare-families' }, head(['contrast', 'family', 'paired tasks', 'mean A', 'mean B', 'B − A']), h('tbody', {}, fam))) : null,
      noise.length ? h('section', { class: 'card', 'aria-labelledby': 'cmp-n-h' }, h('h2', { id: 'cmp-n-h' }, 'Noise floor'),
        h('table', { class: 'runs', testid: 'compare-noise' }, head(['batch', 'trials', 'scenarios', 'sd of trial means', 'range', 'run sd']), h('tbody', {}, noise))) : null]);
  }

  /** Draws #/compare/<kind>/<names>. */
  async function view(main, kind, names) {
    main.append(h('h1', {}, kind === 'batches' ? 'Compare batches' : 'Compare runs'),
      h('p', { class: 'muted small' }, h('a', { href: '#/' }, '← Runs')));
    const status = h('p', { class: 'muted', testid: 'compare-status' }, 'Comparing…');
    main.append(status);
    try {
      const c = await api(`/v1/console/compare?${kind === 'batches' ? 'batches' : 'runs'}=${names.map(encodeURIComponent).join(',')}`);
      status.remove();
      if (kind === 'batches') drawBatches(main, c);
      else drawRuns(main, c);
    } catch (e) {
      status.className = 'error';
      status.setAttribute('role', 'alert');
      status.textContent = `Cannot compare: ${errorText(e)}`;
    }
  }

  window.tbsimCompare = { view, selectCell, fillSelectCell, bar, href };
})();
