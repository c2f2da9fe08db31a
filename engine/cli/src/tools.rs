//! `tbsim tools`: the agent's tool catalogue.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Result;

pub(crate) fn cmd_tools(json: bool) -> Result<ExitCode> {
    let cat = tbsim_core::protocol::catalogue();
    let mut stdout = std::io::stdout().lock();
    if json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&cat)?)?;
    } else {
        for t in cat {
            let params: Vec<String> = t.parameters["properties"]
                .as_object()
                .map(|m| {
                    let req: Vec<&str> = t.parameters["required"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str())
                        .collect();
                    m.keys()
                        .map(|k| {
                            if req.contains(&k.as_str()) {
                                k.clone()
                            } else {
                                format!("{k}?")
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            writeln!(
                stdout,
                "{:<20} {:<9} {:>3} min  ({})  {}",
                t.name,
                t.family,
                t.cost_minutes,
                params.join(", "),
                t.description
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
