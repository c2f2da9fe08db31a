//! Static text corpus for scenario generation.
//!
//! This module holds every piece of prose and reference data that the
//! scenario generators put in front of the agent: the fictional company
//! name, a pool of people's names, knowledge-base articles, the intern
//! handbook and task manuals, an office purchase catalogue, supplier name
//! parts, and short flavour text for non-player characters.
//!
//! All of it was written from scratch for tbsim. The company, the people and
//! the suppliers are fictional, and no text was copied from any other source.
//!
//! Generators use the corpus as raw material and stay deterministic by
//! drawing from these fixed lists with the scenario's seeded RNG:
//!
//! - Long-form documents ([`INTERN_HANDBOOK`], [`KB_FIX_MANUAL`],
//!   [`TRANSACTION_REVIEW_MANUAL`], [`PROCUREMENT_RULES`]) and the NPC
//!   replies are templates. Their `{name}` placeholders are listed on each
//!   item and are filled with [`fill`] before a document is written to the
//!   shared drive.
//! - [`ARTICLES`] are knowledge-base articles without placeholders. The
//!   generator writes `# {title}` followed by the body, and may insert chart
//!   link lines between body lines; the bodies themselves contain no links.
//! - [`CATALOGUE`], [`GIVEN_NAMES`], [`FAMILY_NAMES`], [`SUPPLIER_PREFIXES`]
//!   and [`SUPPLIER_SUFFIXES`] are sampled to build people, suppliers and
//!   purchase requests. A supplier name is `"{prefix} {suffix}"`.

/// Company name used in every generated scenario.
pub const COMPANY: &str = "Ashcombe & Vale Analytics";

/// Given names for generated colleagues: 80 distinct names of varied origin.
///
/// "Alice", "Ava" and "Avery" are reserved for the intern and never appear.
pub const GIVEN_NAMES: &[&str] = &[
    "Amara",
    "Bogdan",
    "Chiara",
    "Dmitri",
    "Efua",
    "Farid",
    "Greta",
    "Haruto",
    "Ingrid",
    "Javier",
    "Kalani",
    "Lucian",
    "Mireille",
    "Nkechi",
    "Oskar",
    "Priya",
    "Quentin",
    "Rashida",
    "Santiago",
    "Tamsin",
    "Ugo",
    "Valentina",
    "Wiremu",
    "Ximena",
    "Yusuf",
    "Zofia",
    "Anders",
    "Beatriz",
    "Cormac",
    "Dalia",
    "Emeka",
    "Fiona",
    "Gideon",
    "Hana",
    "Ilyas",
    "Jovana",
    "Kenji",
    "Leila",
    "Mateo",
    "Nadia",
    "Obinna",
    "Paloma",
    "Rafael",
    "Saoirse",
    "Tariq",
    "Uma",
    "Vikram",
    "Wanjiru",
    "Yara",
    "Zeynep",
    "Arjun",
    "Birgit",
    "Cyrus",
    "Delphine",
    "Elif",
    "Florin",
    "Gulnara",
    "Hamid",
    "Isabeau",
    "Jorge",
    "Kofi",
    "Lena",
    "Malik",
    "Noor",
    "Orla",
    "Pavel",
    "Rosa",
    "Sunil",
    "Thandiwe",
    "Ulrich",
    "Vesna",
    "Wei",
    "Xavier",
    "Yuki",
    "Zainab",
    "Anouk",
    "Bashir",
    "Carmen",
    "Darius",
    "Minseo",
];

/// Family names for generated colleagues: 60 distinct names of varied origin.
///
/// "Smith" is reserved for the intern and never appears.
pub const FAMILY_NAMES: &[&str] = &[
    "Okafor",
    "Lindqvist",
    "Ramirez",
    "Nakamura",
    "Kowalski",
    "Haddad",
    "Sullivan",
    "Mensah",
    "Petrov",
    "Fernandes",
    "Tanaka",
    "Abernathy",
    "Castellanos",
    "Dubois",
    "Eriksen",
    "Farouk",
    "Gallagher",
    "Hoffmann",
    "Iyer",
    "Jankowski",
    "Kariuki",
    "Laurent",
    "Moreau",
    "Nguyen",
    "Oyelaran",
    "Pereira",
    "Quintero",
    "Rasmussen",
    "Sato",
    "Takahashi",
    "Underwood",
    "Varga",
    "Whitfield",
    "Xu",
    "Yilmaz",
    "Zhang",
    "Achebe",
    "Bianchi",
    "Chowdhury",
    "Delacroix",
    "Esposito",
    "Fitzgerald",
    "Gonzaga",
    "Horvath",
    "Ibrahim",
    "Jensen",
    "Kaur",
    "Lemieux",
    "Mwangi",
    "Novak",
    "Osei",
    "Park",
    "Rosales",
    "Szabo",
    "Toivonen",
    "Ueda",
    "Vasquez",
    "Wojcik",
    "Adeyemi",
    "Brennan",
];

/// A knowledge-base article.
///
/// `body` is markdown without the title line. Paragraphs are separated by
/// blank lines, and every body has 18 to 40 non-empty lines mixing
/// paragraphs, bullet lists and at least one numbered list. Bodies contain
/// no links and no placeholders; chart-link lines are inserted by the
/// generator between existing lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Article {
    /// Snake-case file stem, e.g. `"incident_review_guide"`.
    pub stem: &'static str,
    /// Human-readable title, without the leading `#`.
    pub title: &'static str,
    /// Markdown body without the title line.
    pub body: &'static str,
}

/// Knowledge-base articles on distinct workplace topics.
pub const ARTICLES: &[Article] = &[
    Article {
        stem: "incident_review_guide",
        title: "Running an incident review",
        body: include_str!("corpus/incident_review_guide.md"),
    },
    Article {
        stem: "vendor_onboarding_process",
        title: "Onboarding a new vendor",
        body: include_str!("corpus/vendor_onboarding_process.md"),
    },
    Article {
        stem: "quarterly_planning_cycle",
        title: "The quarterly planning cycle",
        body: include_str!("corpus/quarterly_planning_cycle.md"),
    },
    Article {
        stem: "expense_policy",
        title: "Expense policy",
        body: include_str!("corpus/expense_policy.md"),
    },
    Article {
        stem: "new_starter_checklist",
        title: "New starter checklist",
        body: include_str!("corpus/new_starter_checklist.md"),
    },
    Article {
        stem: "data_retention_policy",
        title: "Data retention policy",
        body: include_str!("corpus/data_retention_policy.md"),
    },
    Article {
        stem: "release_readiness_review",
        title: "Release readiness review",
        body: include_str!("corpus/release_readiness_review.md"),
    },
    Article {
        stem: "customer_escalation_path",
        title: "Customer escalation path",
        body: include_str!("corpus/customer_escalation_path.md"),
    },
    Article {
        stem: "inventory_count_procedure",
        title: "Inventory count procedure",
        body: include_str!("corpus/inventory_count_procedure.md"),
    },
    Article {
        stem: "hiring_loop_guide",
        title: "Running a hiring loop",
        body: include_str!("corpus/hiring_loop_guide.md"),
    },
    Article {
        stem: "travel_policy",
        title: "Business travel policy",
        body: include_str!("corpus/travel_policy.md"),
    },
    Article {
        stem: "capacity_planning_notes",
        title: "Capacity planning notes",
        body: include_str!("corpus/capacity_planning_notes.md"),
    },
    Article {
        stem: "meeting_room_etiquette",
        title: "Meeting room booking and etiquette",
        body: include_str!("corpus/meeting_room_etiquette.md"),
    },
    Article {
        stem: "document_naming_conventions",
        title: "Document naming conventions",
        body: include_str!("corpus/document_naming_conventions.md"),
    },
];

/// An item in the office purchase catalogue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogueItem {
    /// Item name as a colleague would say it in a meeting.
    pub name: &'static str,
    /// Lowest plausible unit price, in whole currency units.
    pub min_price: u32,
    /// Highest plausible unit price, in whole currency units (at most 600).
    pub max_price: u32,
}

/// Office purchase catalogue used for procurement requests raised in
/// meetings. 18 items, all with `max_price <= 600`; a few are cheap (under
/// 20) and a few expensive (over 250).
pub const CATALOGUE: &[CatalogueItem] = &[
    CatalogueItem {
        name: "whiteboard marker pack",
        min_price: 5,
        max_price: 14,
    },
    CatalogueItem {
        name: "sticky note bundle",
        min_price: 4,
        max_price: 12,
    },
    CatalogueItem {
        name: "cable organiser kit",
        min_price: 8,
        max_price: 19,
    },
    CatalogueItem {
        name: "notebook pack",
        min_price: 9,
        max_price: 18,
    },
    CatalogueItem {
        name: "box of copier paper",
        min_price: 22,
        max_price: 38,
    },
    CatalogueItem {
        name: "laptop stand",
        min_price: 20,
        max_price: 65,
    },
    CatalogueItem {
        name: "desk lamp",
        min_price: 25,
        max_price: 70,
    },
    CatalogueItem {
        name: "wireless keyboard and mouse set",
        min_price: 35,
        max_price: 90,
    },
    CatalogueItem {
        name: "webcam",
        min_price: 40,
        max_price: 120,
    },
    CatalogueItem {
        name: "label printer",
        min_price: 60,
        max_price: 160,
    },
    CatalogueItem {
        name: "noise-cancelling headset",
        min_price: 80,
        max_price: 220,
    },
    CatalogueItem {
        name: "USB-C docking station",
        min_price: 110,
        max_price: 240,
    },
    CatalogueItem {
        name: "three-drawer filing cabinet",
        min_price: 140,
        max_price: 310,
    },
    CatalogueItem {
        name: "conference speakerphone",
        min_price: 150,
        max_price: 340,
    },
    CatalogueItem {
        name: "27-inch monitor",
        min_price: 180,
        max_price: 380,
    },
    CatalogueItem {
        name: "ergonomic office chair",
        min_price: 260,
        max_price: 540,
    },
    CatalogueItem {
        name: "portable projector",
        min_price: 280,
        max_price: 590,
    },
    CatalogueItem {
        name: "standing desk frame",
        min_price: 310,
        max_price: 600,
    },
];

/// First parts of supplier names (14). Combined with [`SUPPLIER_SUFFIXES`]
/// as `"{prefix} {suffix}"`, giving 168 unique supplier names.
pub const SUPPLIER_PREFIXES: &[&str] = &[
    "Ambervale",
    "Copperleaf",
    "Driftwood",
    "Ironbark",
    "Lanternfield",
    "Meadowbrook",
    "Oakhurst",
    "Pinecrest",
    "Quarrystone",
    "Riverbend",
    "Saltmarsh",
    "Silverfern",
    "Thistledown",
    "Westhaven",
];

/// Second parts of supplier names (12). See [`SUPPLIER_PREFIXES`].
pub const SUPPLIER_SUFFIXES: &[&str] = &[
    "Logistics",
    "Supply Co",
    "Trading",
    "Office Goods",
    "Distribution",
    "Partners",
    "Wholesale",
    "Services",
    "Provisions",
    "Industries",
    "Outfitters",
    "Holdings",
];

/// The intern handbook, placed on the shared drive.
///
/// Placeholders: `{company}`.
pub const INTERN_HANDBOOK: &str = include_str!("corpus/intern_handbook.md");

/// Manual for repairing broken chart links in knowledge-base articles.
///
/// Placeholders: `{company}`.
pub const KB_FIX_MANUAL: &str = include_str!("corpus/kb_fix_manual.md");

/// Manual for screening the transactions table for abnormal suppliers.
///
/// Placeholders: `{company}`, `{approval_limit}`, `{director_limit}` (a larger
/// sign-off threshold), `{old_limit}` (an earlier version's limit),
/// `{po_threshold}` (a purchase-order threshold), `{card_limit}`, `{tender_threshold}`,
/// `{history_months}`, `{petty_cash}`.
pub const TRANSACTION_REVIEW_MANUAL: &str = include_str!("corpus/transaction_review_manual.md");

/// Rules for deciding which procurement requests are reasonable.
///
/// Placeholders: `{company}`, `{max_quantity}`, `{max_unit_price}`,
/// `{max_total}`.
pub const PROCUREMENT_RULES: &str = include_str!("corpus/procurement_rules.md");

/// Polite replies an NPC gives when asked about something outside its area.
///
/// Placeholders: `{handbook}` (the handbook's path on the shared drive).
pub const NPC_DEFAULT_REPLIES: &[&str] = &[
    "Sorry, that's outside what I work on. Your manager may know, or have a look at the handbook at {handbook}.",
    "I'm not the right person for that, I'm afraid. The handbook at {handbook} lists who to ask for what.",
    "I don't have that information. Try whoever assigned you the task, or check {handbook}.",
    "Good question, but not one I can answer. The handbook ({handbook}) explains who handles it.",
    "I haven't come across that. If it's about money or suppliers, Finance is your best bet; otherwise see {handbook}.",
    "That isn't something I look after. Have a look at {handbook}; it should point you to the right person.",
    "I'm not sure, sorry. If it's about a chart, ask the chart owner named in the article; {handbook} has more.",
    "I can't help with that one. Your manager should know, and {handbook} covers most of the basics.",
    "No idea, I'm afraid. Check the handbook at {handbook} first, then ask your manager if it's still unclear.",
    "That's not my area. If it's about a meeting, the calendar has the details; otherwise try {handbook}.",
];

/// One-sentence persona descriptions used as flavour for NPCs.
///
/// No placeholders.
pub const PERSONAS: &[&str] = &[
    "Methodical and precise, answers in short numbered points and appreciates the same in return.",
    "Warm and chatty, often shares a bit of office news before getting to the answer.",
    "Busy and terse, replies quickly with the essentials and skips the pleasantries.",
    "A patient teacher who explains the reasoning behind an answer, sometimes at length.",
    "Cautious and detail-minded, double-checks every figure before passing it on.",
    "Upbeat and encouraging, quick to thank people for asking.",
    "Has a dry sense of humour but always gets to the point in the end.",
    "Formal and courteous, writes in complete sentences and signs off every message.",
    "A pragmatic problem-solver who prefers a good answer today to a perfect one next week.",
    "Quiet and reserved, gives accurate answers but rarely volunteers anything extra.",
    "Focused on deadlines and a little impatient with vague questions.",
    "Collaborative and generous with time, often suggests who else might help.",
];

pub use tbsim_core::template::{fill, placeholders};

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn placeholder_set(text: &str) -> BTreeSet<&str> {
        placeholders(text).into_iter().collect()
    }

    fn set<'a>(names: &[&'a str]) -> BTreeSet<&'a str> {
        names.iter().copied().collect()
    }

    fn non_empty_lines(text: &str) -> usize {
        text.lines().filter(|l| !l.trim().is_empty()).count()
    }

    fn assert_unique(items: &[&str], what: &str) {
        let unique: BTreeSet<&str> = items.iter().copied().collect();
        assert_eq!(unique.len(), items.len(), "duplicate {what}");
    }

    const DOCUMENTS: &[(&str, &str, &[&str], usize, usize)] = &[
        ("INTERN_HANDBOOK", INTERN_HANDBOOK, &["company"], 40, 70),
        ("KB_FIX_MANUAL", KB_FIX_MANUAL, &["company"], 20, 35),
        (
            "TRANSACTION_REVIEW_MANUAL",
            TRANSACTION_REVIEW_MANUAL,
            &[
                "company",
                "approval_limit",
                "director_limit",
                "history_months",
                "old_limit",
                "petty_cash",
                "po_threshold",
                "card_limit",
                "tender_threshold",
            ],
            35,
            65,
        ),
        (
            "PROCUREMENT_RULES",
            PROCUREMENT_RULES,
            &["company", "max_quantity", "max_unit_price", "max_total"],
            15,
            30,
        ),
    ];

    #[test]
    fn documents_have_exactly_the_documented_placeholders() {
        for (name, text, expected, _, _) in DOCUMENTS {
            assert_eq!(placeholder_set(text), set(expected), "{name}");
        }
        for reply in NPC_DEFAULT_REPLIES {
            assert_eq!(placeholder_set(reply), set(&["handbook"]), "{reply}");
        }
        for persona in PERSONAS {
            assert!(placeholders(persona).is_empty(), "{persona}");
        }
        for article in ARTICLES {
            assert!(placeholders(article.body).is_empty(), "{}", article.stem);
            assert!(placeholders(article.title).is_empty(), "{}", article.stem);
        }
    }

    #[test]
    fn documents_have_documented_lengths() {
        for (name, text, _, min, max) in DOCUMENTS {
            let total = text.lines().count();
            let non_empty = non_empty_lines(text);
            assert!((*min..=*max).contains(&total), "{name}: {total} lines");
            assert!(
                (*min..=*max).contains(&non_empty),
                "{name}: {non_empty} non-empty lines"
            );
            assert!(text.starts_with("# "), "{name} should start with a title");
        }
    }

    #[test]
    fn documents_state_key_facts() {
        let kb = KB_FIX_MANUAL;
        for needle in ["<stem>_fixed.md", "charts?id=OLD", "Chart owner:"] {
            assert!(kb.contains(needle), "KB_FIX_MANUAL lacks {needle}");
        }
        let tx = TRANSACTION_REVIEW_MANUAL;
        for needle in [
            "transaction_id",
            "date",
            "supplier_rating",
            "department",
            "requested_by",
            "approved_by",
            "amount",
            "transaction_review_report.json",
            "\"abnormal_suppliers\"",
            "\"approval_limit\"",
            "5%",
            "ALL four",
        ] {
            assert!(
                tx.contains(needle),
                "TRANSACTION_REVIEW_MANUAL lacks {needle}"
            );
        }
        let hb = INTERN_HANDBOOK;
        for needle in [
            "person who assigned the task, or your manager",
            "chart owner named in the article",
            "Finance department",
            "calendar",
            "new work",
        ] {
            assert!(hb.contains(needle), "INTERN_HANDBOOK lacks {needle}");
        }
    }

    #[test]
    fn names_are_unique_and_sized() {
        assert_eq!(GIVEN_NAMES.len(), 80);
        assert_eq!(FAMILY_NAMES.len(), 60);
        assert_unique(GIVEN_NAMES, "given name");
        assert_unique(FAMILY_NAMES, "family name");
        for name in GIVEN_NAMES.iter().chain(FAMILY_NAMES) {
            let mut chars = name.chars();
            assert!(
                chars.next().is_some_and(|c| c.is_ascii_uppercase()),
                "{name}"
            );
            assert!(chars.all(|c| c.is_ascii_lowercase()), "{name}");
        }
        for reserved in ["Alice", "Ava", "Avery"] {
            assert!(!GIVEN_NAMES.contains(&reserved), "{reserved} is reserved");
        }
        assert!(!FAMILY_NAMES.contains(&"Smith"), "Smith is reserved");
    }

    #[test]
    fn articles_are_well_formed() {
        assert!(ARTICLES.len() >= 12);
        let stems: Vec<&str> = ARTICLES.iter().map(|a| a.stem).collect();
        let titles: Vec<&str> = ARTICLES.iter().map(|a| a.title).collect();
        assert_unique(&stems, "article stem");
        assert_unique(&titles, "article title");
        for article in ARTICLES {
            let stem = article.stem;
            assert!(
                !stem.is_empty()
                    && !stem.starts_with('_')
                    && !stem.ends_with('_')
                    && !stem.contains("__")
                    && stem.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{stem} is not snake_case"
            );
            let body = article.body;
            let n = non_empty_lines(body);
            assert!((18..=40).contains(&n), "{stem}: {n} non-empty lines");
            assert!(!body.contains("http"), "{stem} contains a URL");
            assert!(!body.contains("charts?id"), "{stem} contains a chart link");
            assert!(!body.starts_with('#'), "{stem} body includes a title");
            let lines: Vec<&str> = body.lines().collect();
            assert!(
                lines.iter().any(|l| l.starts_with("- ")),
                "{stem}: no bullets"
            );
            assert!(
                lines.iter().any(|l| l.starts_with("1. ")),
                "{stem}: no numbered list"
            );
            assert!(
                lines
                    .iter()
                    .any(|l| l.chars().next().is_some_and(char::is_alphabetic)),
                "{stem}: no paragraph"
            );
            assert!(
                body.contains("\n\n"),
                "{stem}: paragraphs must be separated by blank lines"
            );
        }
    }

    #[test]
    fn catalogue_invariants() {
        assert_eq!(CATALOGUE.len(), 18);
        let names: Vec<&str> = CATALOGUE.iter().map(|c| c.name).collect();
        assert_unique(&names, "catalogue item");
        for item in CATALOGUE {
            assert!(item.min_price >= 1, "{}", item.name);
            assert!(item.min_price < item.max_price, "{}", item.name);
            assert!(item.max_price <= 600, "{}", item.name);
        }
        let cheap = CATALOGUE.iter().filter(|c| c.max_price < 20).count();
        let expensive = CATALOGUE.iter().filter(|c| c.min_price > 250).count();
        assert!(cheap >= 3, "only {cheap} cheap items");
        assert!(expensive >= 3, "only {expensive} expensive items");
    }

    #[test]
    fn supplier_names_are_unique() {
        assert_eq!(SUPPLIER_PREFIXES.len(), 14);
        assert_eq!(SUPPLIER_SUFFIXES.len(), 12);
        let names: BTreeSet<String> = SUPPLIER_PREFIXES
            .iter()
            .flat_map(|p| SUPPLIER_SUFFIXES.iter().map(move |s| format!("{p} {s}")))
            .collect();
        assert_eq!(names.len(), 168);
        for part in SUPPLIER_PREFIXES.iter().chain(SUPPLIER_SUFFIXES) {
            assert_eq!(part.trim(), *part);
            assert!(!part.contains(','), "{part}");
        }
        assert!(!COMPANY.is_empty());
    }

    #[test]
    fn sized_flavour_lists() {
        assert_eq!(NPC_DEFAULT_REPLIES.len(), 10);
        assert_eq!(PERSONAS.len(), 12);
        assert_unique(NPC_DEFAULT_REPLIES, "NPC reply");
        assert_unique(PERSONAS, "persona");
    }

    #[test]
    fn fill_replaces_placeholders() {
        let out = fill(
            "{a_b} and {c}, {a_b}; {\"json\": 1} {} {X}",
            &[("a_b", "one"), ("c", "{c}"), ("unused", "z")],
        );
        assert_eq!(out, "one and {c}, one; {\"json\": 1} {} {X}");
    }

    #[test]
    fn fill_handles_every_document() {
        let vars = [
            ("company", COMPANY),
            ("approval_limit", "5000"),
            ("director_limit", "20000"),
            ("old_limit", "6000"),
            ("po_threshold", "7500"),
            ("card_limit", "4000"),
            ("tender_threshold", "9000"),
            ("petty_cash", "200"),
            ("history_months", "6"),
            ("max_quantity", "10"),
            ("max_unit_price", "300"),
            ("max_total", "1500"),
            ("handbook", "shared/intern_handbook.md"),
        ];
        for (name, text, _, _, _) in DOCUMENTS {
            let out = fill(text, &vars);
            assert!(placeholders(&out).is_empty(), "{name}");
        }
        let handbook = fill(INTERN_HANDBOOK, &vars);
        assert!(handbook.contains(COMPANY));
        let tx = fill(TRANSACTION_REVIEW_MANUAL, &vars);
        assert!(tx.contains("{\"abnormal_suppliers\": [], \"approval_limit\""));
        for reply in NPC_DEFAULT_REPLIES {
            assert!(fill(reply, &vars).contains("shared/intern_handbook.md"));
        }
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "unreplaced placeholders")]
    fn fill_panics_on_missing_placeholder_in_debug() {
        let _ = fill("Hello {name}", &[("other", "x")]);
    }
}
