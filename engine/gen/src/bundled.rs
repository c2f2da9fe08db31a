//! The script families compiled into tbsim. A module of its own so the script host
//! can tell bundled text from a stranger's without importing the registry.

/// The script families bundled with tbsim: `(folder name, family.star, README.md)`.
/// The README travels with the binary too: the gate asks colleagues its example
/// questions wherever tbsim is installed. A family is implemented once: the script
/// ports of four Rust families were removed (issue 37; `content/families/README.md`).
pub const BUNDLED: [(&str, &str, &str); 3] = [
    (
        "inventory_reorder",
        include_str!("../../../content/families/inventory_reorder/family.star"),
        include_str!("../../../content/families/inventory_reorder/README.md"),
    ),
    (
        "incident_postmortem",
        include_str!("../../../content/families/incident_postmortem/family.star"),
        include_str!("../../../content/families/incident_postmortem/README.md"),
    ),
    (
        "shift_roster",
        include_str!("../../../content/families/shift_roster/family.star"),
        include_str!("../../../content/families/shift_roster/README.md"),
    ),
];
