//! Data completion (stub).
use serde::{Deserialize, Serialize};

use super::{Ctx, Parts};

/// Parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// Variants.
pub fn variants() -> Vec<(String, Params)> {
    Vec::new()
}

/// Generates one instance.
pub fn generate(_ctx: &Ctx<'_>, _p: &Params) -> Result<Parts, String> {
    Err("todo".into())
}
