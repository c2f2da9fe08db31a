//! KB link fix: articles whose chart links point at rebuilt charts.
//!
//! Each broken link line names its chart owner; only that owner knows the new ID.
//! The agent must ask every owner, replace exactly the IDs, and save each article as
//! `<stem>_fixed.md`. Differences from the reference: no answer key on the drive;
//! each owner discloses only their own charts; owners are drawn without
//! repetition within an article.

use std::collections::{BTreeMap, BTreeSet};

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_scenario::{Check, CheckpointSpec, Clue, Content, FileSpec, Gate, TaskSpec};

/// Difficulty presets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// 1 article, 3-4 links, 1 owner per article.
    Easy,
    /// 3 articles, 1-3 links, 2 owners per article.
    Medium,
    /// 5 articles, 2-5 links, 3 owners per article.
    Hard,
}

/// Parameters; unset ones come from the preset (the preset itself is drawn if unset).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Preset.
    #[serde(default)]
    pub difficulty: Option<Level>,
    /// Number of articles (1-8).
    #[serde(default)]
    pub articles: Option<usize>,
    /// Links per article, inclusive range.
    #[serde(default)]
    pub links: Option<(usize, usize)>,
    /// Distinct owners per article.
    #[serde(default)]
    pub owners_per_article: Option<usize>,
}

/// The manual's drive path.
pub const MANUAL: &str = "drive/kb/kb_fix_manual.md";

struct Link {
    old: String,
    new: String,
    owner: usize,
}

/// How an owner describes each version of a rebuilt chart. Each pool holds as many
/// phrasings with a negation word as without, and of like lengths, so that neither
/// a negation, the clause's length nor its place in the reply (the four lines are
/// shuffled) tells the current chart from the others: only what the words say does
/// (issue 37: the one line without "not" gave the live ID away).
const CURRENT: &[&str] = &[
    "current, link this one",
    "the live version, use it",
    "live now, no change planned",
    "nothing newer exists, link it",
    "not going anywhere, this is live",
    "the one we use in every report now",
];
const WITHDRAWN: &[&str] = &[
    "withdrawn, do not use",
    "taken down in the spring",
    "replaced by a later rebuild",
    "no longer maintained by anyone",
    "superseded, please don't link it",
    "retired after the data fix in May",
];
const DRAFT: &[&str] = &[
    "a draft still in review",
    "being reworked right now",
    "work in progress, not ready",
    "a test copy, never published",
    "draft, not live yet, do not link",
    "staging build for the next release",
];

const COPY: &[&str] = &[
    "a sandbox copy, unused",
    "my personal copy, frozen",
    "no one else uses this copy",
    "an export, not for articles",
    "not maintained, a one-off export",
    "a frozen snapshot of last quarter",
];

fn link_line(id: &str, owner: &str) -> String {
    format!("Chart: kb.internal/charts?id={id} (Chart owner: {owner})")
}

/// The variants: one per preset.
pub fn variants() -> Vec<(String, Params)> {
    [
        ("easy", Level::Easy),
        ("medium", Level::Medium),
        ("hard", Level::Hard),
    ]
    .into_iter()
    .map(|(k, l)| {
        (
            format!("kb_fix/{k}"),
            Params {
                difficulty: Some(l),
                ..Params::default()
            },
        )
    })
    .collect()
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("kb");
    let level = p
        .difficulty
        .unwrap_or_else(|| [Level::Easy, Level::Medium, Level::Hard][rng.random_range(0..3)]);
    let (na, links, opa) = match level {
        // At least three links a task, each among four versions: a guess among
        // the IDs an owner names fixes every link once in 64 tasks at most.
        Level::Easy => (1, (3, 4), 1),
        Level::Medium => (3, (1, 3), 2),
        Level::Hard => (5, (2, 5), 3),
    };
    let na = p.articles.unwrap_or(na);
    let (lmin, lmax) = p.links.unwrap_or(links);
    let opa = p.owners_per_article.unwrap_or(opa);
    if !(1..=8).contains(&na) || lmin == 0 || lmin > lmax || lmax > 8 || !(1..=lmax).contains(&opa)
    {
        return Err(format!(
            "kb_fix parameters out of range: articles {na} (1-8), links {lmin}..{lmax} (1-8), owners per article {opa} (1..links max)"
        ));
    }
    let pool = ctx.company.non_executives();
    let chosen = pick_distinct(&mut rng, corpus::ARTICLES.len(), na);
    let mut used_ids = BTreeSet::new();
    let mut draw_id = |rng: &mut tbsim_core::rng::StreamRng, prefix: &str| loop {
        let id = format!("{prefix}{}", rng.random_range(100_000..1_000_000u32));
        if used_ids.insert(id.clone()) {
            return id;
        }
    };

    let task = ctx.task_key();
    let mut files = vec![FileSpec {
        path: MANUAL.into(),
        content: Content::Text(corpus::fill(
            corpus::KB_FIX_MANUAL,
            &[("company", corpus::COMPANY)],
        )),
    }];
    // owner index in `pool` -> (old, new, article title) of their links
    let mut by_owner: BTreeMap<usize, Vec<(String, String, String)>> = BTreeMap::new();
    let mut contains = Vec::new();
    let mut exact = Vec::new();
    let mut plan_reads = Vec::new();
    let mut plan_writes = Vec::new();
    let mut article_lines = Vec::new();
    for ai in chosen {
        let a = &corpus::ARTICLES[ai];
        let owners = pick_distinct(&mut rng, pool.len(), opa);
        let n = rng.random_range(lmin..=lmax);
        let ls: Vec<Link> = (0..n)
            .map(|i| Link {
                old: draw_id(&mut rng, "OLD"),
                new: draw_id(&mut rng, "NEW"),
                owner: owners[i % owners.len()],
            })
            .collect();
        let mut paras: Vec<String> = a.body.trim().split("\n\n").map(str::to_owned).collect();
        // Insert link paragraphs at distinct boundaries after the first paragraph.
        let mut inserted: Vec<(usize, usize)> = ls
            .iter()
            .enumerate()
            .map(|(i, _)| (rng.random_range(1..=paras.len()), i))
            .collect();
        inserted.sort();
        for (shift, (pos, li)) in inserted.iter().enumerate() {
            paras.insert(pos + shift, format!("\u{0}{li}"));
        }
        let render = |new: bool| -> String {
            let body: Vec<String> = paras
                .iter()
                .map(|para| match para.strip_prefix('\u{0}') {
                    Some(i) => {
                        let l = &ls[i.parse::<usize>().unwrap_or(0)];
                        link_line(if new { &l.new } else { &l.old }, &pool[l.owner].name)
                    }
                    None => para.clone(),
                })
                .collect();
            format!("# {}\n\n{}\n", a.title, body.join("\n\n"))
        };
        let (original, fixed) = (render(false), render(true));
        let src = format!("{}/{}.md", ctx.folder("drive/kb/articles"), a.stem);
        let out = format!("workspace/{}{}_fixed.md", a.stem, ctx.suffix());
        files.push(FileSpec {
            path: src.clone(),
            content: Content::Text(original),
        });
        for l in &ls {
            by_owner.entry(l.owner).or_default().push((
                l.old.clone(),
                l.new.clone(),
                a.title.to_owned(),
            ));
        }
        contains.push(Check::FileContains {
            path: out.clone(),
            present: ls.iter().map(|l| format!("charts?id={} ", l.new)).collect(),
            absent: ls.iter().map(|l| format!("charts?id={} ", l.old)).collect(),
        });
        exact.push(Check::FileText {
            path: out.clone(),
            expected: fixed.clone(),
        });
        plan_reads.push(step("read_file", json!({"path": src})));
        plan_writes.push(step("write_file", json!({"path": out, "content": fixed})));
        article_lines.push(format!("- `{src}` -> save as `{out}`"));
    }

    let mut clues = Vec::new();
    let mut clue_keys = Vec::new();
    let mut plan_asks = Vec::new();
    let mut plan_reads_replies = Vec::new();
    // Every chart has four versions: the owner names a withdrawn rebuild, the
    // current one, a draft not yet live and a copy, on lines of their own. Swapping an old ID
    // for whatever ID comes next to it (a script's reading of a mapping) links a
    // withdrawn or draft chart; only reading which one is current fixes the link.
    // Its own stream, so the articles stay as they were drawn.
    let mut history = ctx.rng("kb/history");
    for (owner, items) in &by_owner {
        let person = pool[*owner];
        let key = format!("clue/{}/{}", ctx.id, slug(&person.name));
        let mut subject: Vec<String> = items.iter().map(|(old, _, _)| old.clone()).collect();
        let titles: BTreeSet<&str> = items.iter().map(|(_, _, t)| t.as_str()).collect();
        subject.extend(titles.iter().map(|t| (*t).to_owned()));
        let mapping: Vec<String> = items
            .iter()
            .map(|(old, new, t)| {
                let withdrawn = draw_id(&mut history, "NEW");
                let draft = draw_id(&mut history, "NEW");
                let copy = draw_id(&mut history, "NEW");
                let pick = |rng: &mut tbsim_core::rng::StreamRng, pool: &[&str]| {
                    pool[rng.random_range(0..pool.len())].to_owned()
                };
                let current = format!("  {new}: {}", pick(&mut history, CURRENT));
                let gone = format!("  {withdrawn}: {}", pick(&mut history, WITHDRAWN));
                let next = format!("  {draft}: {}", pick(&mut history, DRAFT));
                let spare = format!("  {copy}: {}", pick(&mut history, COPY));
                let mut lines = [current, gone, next, spare];
                for i in (1..lines.len()).rev() {
                    lines.swap(i, history.random_range(0..=i));
                }
                format!(
                    "- {old} (in \"{t}\") has four versions:\n{}",
                    lines.join("\n")
                )
            })
            .collect();
        clues.push((person.key.clone(), Clue {
            key: key.clone(),
            task: Some(task.clone()),
            trigger: vec![
                ["chart", "link", "id", "new", "replace", "broken", "rebuilt", "point", "now", "instead", "use", "substitute", "successor", "equivalent"]
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                subject,
            ],
            after: Vec::new(),
            response: format!(
                "Yes, those are my charts. They were rebuilt more than once; here is where each stands:\n{}\nI can't edit the articles myself, so please update the links to the current charts.",
                mapping.join("\n")
            ),
        }));
        clue_keys.push(key);
        let olds: Vec<&str> = items.iter().map(|(o, _, _)| o.as_str()).collect();
        let titles: Vec<&str> = titles.into_iter().collect();
        plan_asks.push(step(
            "send_message",
            json!({"to": person.key, "text": format!("Hi {}, the chart links {} in {} are broken. What are the new chart IDs?", person.name, olds.join(", "), titles.join(", "))}),
        ));
        let mut read = step("read_messages", json!({"with": person.key}));
        read.gate = Gate::ReplyFrom(person.key.clone());
        plan_reads_replies.push(read);
    }

    let mut plan = vec![step("read_file", json!({"path": MANUAL}))];
    plan.extend(plan_reads);
    plan.extend(plan_asks);
    plan.extend(plan_reads_replies);
    plan.extend(plan_writes);
    let lvl = match level {
        Level::Easy => "easy",
        Level::Medium => "medium",
        Level::Hard => "hard",
    };
    let spec = ctx
        .task_spec::<super::meta_task::KbFix>(format!("kb_fix/{lvl}"))
        .key(task.clone())
        .title("Fix broken chart links")
        .objective(format!(
            "Some knowledge-base articles link to charts that were rebuilt, so their chart links are broken. Fix the links in:\n{}\nChange nothing but the chart IDs. The knowledge-base manual on the shared drive explains the procedure.",
            article_lines.join("\n")
        ))
        .checkpoints(vec![
            CheckpointSpec {
                key: "owners_asked".into(),
                description: "Every chart owner gave you their new chart IDs".into(),
                weight: 1,
                check: Check::Disclosed(clue_keys),
                feedback: "Not every chart owner was asked. Each broken link line names its owner (\"Chart owner: ...\"); message each owner, naming the old IDs of their charts.".into(),
            },
            CheckpointSpec {
                key: "links_fixed".into(),
                description: "Every fixed article uses the new chart IDs and no old ones".into(),
                weight: 1,
                check: Check::All(contains),
                feedback: "Some fixed articles are missing, still contain old chart IDs, or lack the new ones. Replace every `charts?id=OLD...` with the ID its owner gave you.".into(),
            },
            CheckpointSpec {
                key: "articles_intact".into(),
                description: "Each fixed article equals the original except for the chart IDs".into(),
                weight: 1,
                check: Check::All(exact),
                feedback: "A fixed article differs from the original in more than the chart IDs, or was not saved under `workspace/<stem>_fixed.md`. Copy the article and change only the IDs.".into(),
            },
        ])
        .hints(vec![
            format!("The manual at `{MANUAL}` explains how broken chart links are repaired."),
            "Each broken link line names its chart owner; only that person knows the new ID.".into(),
            "Message each chart owner with the old IDs of their charts, replace only those IDs, and save `<stem>_fixed.md` in your workspace.".into(),
        ])
        .plan(plan, by_owner.len())
        .build();
    Ok(Parts {
        tasks: vec![spec],
        files,
        meetings: Vec::new(),
        clues,
        ..Default::default()
    })
}

/// Plausible wrong fixes for tests, per article: every link pointed at the
/// withdrawn rebuild its owner also names (what swapping an old ID for the ID
/// beside it in the reply can give), and the right fix with one link left old.
pub fn wrong_answers(
    task: &TaskSpec,
    scenario: &tbsim_scenario::Scenario,
) -> Vec<(String, String)> {
    // Old ID -> withdrawn ID, read from the owners' replies the way an agent sees them.
    let mut withdrawn = std::collections::BTreeMap::new();
    for clue in scenario
        .company
        .people
        .iter()
        .flat_map(|p| &p.clues)
        .filter(|c| c.task.as_deref() == Some(task.key.as_str()))
    {
        let mut old = None;
        for line in clue.response.lines() {
            if let Some(rest) = line.strip_prefix("- ") {
                old = rest.split_whitespace().next().map(str::to_owned);
            } else if let (Some(o), Some((id, status))) = (&old, line.trim().split_once(": "))
                && WITHDRAWN.contains(&status)
            {
                withdrawn.insert(o.clone(), id.to_owned());
            }
        }
    }
    let pick = |key: &str| -> Vec<&Check> {
        task.checkpoints
            .iter()
            .filter(|c| c.key == key)
            .flat_map(|c| match &c.check {
                Check::All(v) => v.iter().collect(),
                other => vec![other],
            })
            .collect()
    };
    let mut out = Vec::new();
    for (exact, contains) in pick("articles_intact").into_iter().zip(pick("links_fixed")) {
        let (
            Check::FileText { path, expected },
            Check::FileContains {
                present, absent, ..
            },
        ) = (exact, contains)
        else {
            continue;
        };
        // `present[i]` is the new link of `absent[i]`'s old one.
        let mut to_withdrawn = expected.clone();
        for (new, old) in present.iter().zip(absent) {
            let id = old.trim_start_matches("charts?id=").trim_end();
            if let Some(w) = withdrawn.get(id) {
                to_withdrawn = to_withdrawn.replace(new, &format!("charts?id={w} "));
            }
        }
        out.push((path.clone(), to_withdrawn));
        if let (Some(new), Some(old)) = (present.first(), absent.first()) {
            out.push((path.clone(), expected.replacen(new, old, 1)));
        }
    }
    out
}
