//! The generated company: departments, positions, names and rooms.
//!
//! Structure is a function of size (executives by threshold, departments by share
//! with the largest-remainder method, managers by span of control); only names,
//! personas and reply habits are drawn.

use rand::RngExt;

use super::corpus;
use tbsim_core::rng::stream;
use tbsim_scenario::{Person, Room};

/// The intern's key.
pub const INTERN_KEY: &str = "agent/intern";
/// The intern's name (its parts are reserved in the name pools).
pub const INTERN_NAME: &str = "Avery Smith";
/// Where the intern handbook lives.
pub const HANDBOOK: &str = "drive/handbook/intern_handbook.md";

/// Department, share (per mille of non-executive staff), manager span, manager title, IC positions.
const DEPARTMENTS: &[(&str, u32, usize, &str, &[&str])] = &[
    (
        "Engineering",
        300,
        7,
        "Engineering Manager",
        &[
            "Software Engineer",
            "Senior Software Engineer",
            "QA Engineer",
            "DevOps Engineer",
        ],
    ),
    (
        "Sales",
        140,
        6,
        "Sales Manager",
        &["Account Executive", "Sales Representative"],
    ),
    (
        "Marketing",
        150,
        6,
        "Marketing Manager",
        &[
            "Content Strategist",
            "SEO Specialist",
            "Social Media Planner",
        ],
    ),
    (
        "Product",
        140,
        6,
        "Product Manager",
        &["Product Designer", "UX Researcher"],
    ),
    (
        "Human Resources",
        80,
        8,
        "HR Manager",
        &["Recruiter", "HR Generalist"],
    ),
    (
        "Finance",
        120,
        6,
        "Finance Manager",
        &["Accountant", "Financial Analyst"],
    ),
];

/// The company's people and the intern's mentor.
#[derive(Debug, Clone)]
pub struct Roster {
    /// Everyone, executives first, then departments in a fixed order.
    pub people: Vec<Person>,
    /// The intern's manager (a person key).
    pub mentor: String,
}

impl Roster {
    /// Generates a company of `size` people for a scenario.
    pub fn generate(seed: u64, scenario: &str, size: usize) -> Result<Roster, String> {
        let combos = corpus::GIVEN_NAMES.len() * corpus::FAMILY_NAMES.len();
        if !(20..=combos).contains(&size) {
            return Err(format!(
                "company_size must be between 20 and {combos}, found {size}"
            ));
        }
        let mut slots: Vec<(String, String)> = Vec::with_capacity(size);
        let execs: &[(&str, usize)] = &[
            ("Chief Executive Officer", 1),
            ("Chief Technology Officer", 10),
            ("Chief Operating Officer", 20),
            ("Chief Financial Officer", 30),
        ];
        for (title, min) in execs {
            if size >= *min {
                slots.push(("Executive".into(), (*title).into()));
            }
        }
        let rest = size - slots.len();
        let total: u32 = DEPARTMENTS.iter().map(|d| d.1).sum();
        let mut counts: Vec<(usize, u64)> = DEPARTMENTS
            .iter()
            .map(|d| {
                let exact = rest as u64 * u64::from(d.1);
                (
                    (exact / u64::from(total)) as usize,
                    exact % u64::from(total),
                )
            })
            .collect();
        let mut short = rest - counts.iter().map(|c| c.0).sum::<usize>();
        let mut order: Vec<usize> = (0..counts.len()).collect();
        order.sort_by(|a, b| counts[*b].1.cmp(&counts[*a].1).then(a.cmp(b)));
        for i in order {
            if short == 0 {
                break;
            }
            counts[i].0 += 1;
            short -= 1;
        }
        let mut pos_rng = stream(seed, &format!("gen/{scenario}/company/positions"));
        for ((dept, _, span, manager, ics), (n, _)) in DEPARTMENTS.iter().zip(&counts) {
            let managers = n.div_ceil(span + 1).max(1).min(*n);
            for i in 0..*n {
                let position = if i < managers {
                    (*manager).to_owned()
                } else {
                    ics[pos_rng.random_range(0..ics.len())].to_owned()
                };
                slots.push(((*dept).into(), position));
            }
        }
        let mut rng = stream(seed, &format!("gen/{scenario}/company/names"));
        let picks = super::pick_distinct(&mut rng, combos, size);
        let mut people = Vec::with_capacity(size);
        let handbook_reply =
            |i: usize| corpus::fill(corpus::NPC_DEFAULT_REPLIES[i], &[("handbook", HANDBOOK)]);
        for ((dept, position), pick) in slots.into_iter().zip(picks) {
            let given = corpus::GIVEN_NAMES[pick / corpus::FAMILY_NAMES.len()];
            let family = corpus::FAMILY_NAMES[pick % corpus::FAMILY_NAMES.len()];
            let name = format!("{given} {family}");
            let key = format!("npc/{}-{}", slug(given), slug(family));
            let lo = rng.random_range(2..=4u32);
            let hi = lo + rng.random_range(2..=6u32);
            people.push(Person {
                key,
                name,
                department: dept,
                position,
                persona: corpus::PERSONAS[rng.random_range(0..corpus::PERSONAS.len())].to_owned(),
                default_reply: Some(handbook_reply(
                    rng.random_range(0..corpus::NPC_DEFAULT_REPLIES.len()),
                )),
                reply_minutes: Some((lo, hi)),
                clues: Vec::new(),
            });
        }
        let mentor = people
            .iter()
            .find(|p| p.position == "Chief Operating Officer")
            .or_else(|| people.first())
            .map(|p| p.key.clone())
            .ok_or("empty company")?;
        Ok(Roster { people, mentor })
    }

    /// Members of a department.
    pub fn department(&self, dept: &str) -> Vec<&Person> {
        self.people
            .iter()
            .filter(|p| p.department == dept)
            .collect()
    }

    /// The department's managers (by department, not just by title).
    pub fn managers(&self, dept: &str) -> Vec<&Person> {
        self.department(dept)
            .into_iter()
            .filter(|p| p.position.ends_with("Manager"))
            .collect()
    }

    /// The department's individual contributors.
    pub fn staff(&self, dept: &str) -> Vec<&Person> {
        self.department(dept)
            .into_iter()
            .filter(|p| !p.position.ends_with("Manager"))
            .collect()
    }

    /// Everyone outside the executive team.
    pub fn non_executives(&self) -> Vec<&Person> {
        self.people
            .iter()
            .filter(|p| p.department != "Executive")
            .collect()
    }
}

/// Lower-case ASCII slug.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// The office's meeting rooms.
pub fn rooms() -> Vec<Room> {
    [
        ("Atlas", 6),
        ("Birch", 8),
        ("Cedar", 10),
        ("Dune", 4),
        ("Ember", 12),
        ("Fjord", 8),
    ]
    .iter()
    .map(|(n, c)| Room {
        key: format!("room/{}", n.to_lowercase()),
        name: format!("{n} Room"),
        capacity: *c,
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structure_follows_size_and_names_are_unique() {
        for size in [20, 40, 200] {
            let r = Roster::generate(1, "s", size).unwrap();
            assert_eq!(r.people.len(), size);
            let mut keys: Vec<&str> = r.people.iter().map(|p| p.key.as_str()).collect();
            keys.sort();
            keys.dedup();
            assert_eq!(keys.len(), size);
            for (d, ..) in DEPARTMENTS {
                assert!(
                    !r.managers(d).is_empty(),
                    "{d} has a manager at size {size}"
                );
            }
            assert!(!r.people.iter().any(|p| p.name == INTERN_NAME));
        }
        let r = Roster::generate(1, "s", 40).unwrap();
        assert!(
            r.staff("Marketing").len() >= 4 && r.staff("Product").len() >= 4,
            "meeting attend needs 4 staff"
        );
        assert!(Roster::generate(1, "s", 19).is_err());
    }

    #[test]
    fn same_seed_same_company_other_seed_other_names() {
        let a = Roster::generate(5, "s", 40).unwrap();
        let b = Roster::generate(5, "s", 40).unwrap();
        let c = Roster::generate(6, "s", 40).unwrap();
        assert_eq!(a.people, b.people);
        assert_ne!(a.people, c.people);
    }
}
