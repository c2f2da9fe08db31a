//! `tbsim-script`, the family-script host: tbsim starts it and speaks to it over
//! its standard input and output, one JSON object per line each way, one answer
//! per request, in order. See [`tbsim_script::protocol`] for the messages.
//!
//! It reads nothing but its standard input and writes nothing but its standard
//! output (and a line on standard error if that breaks); scripts cannot reach
//! either. It ends when its input ends.

#![deny(unsafe_code)]

use std::io::{BufRead, Write};

fn main() -> std::process::ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut host = tbsim_script::protocol::Host::default();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in stdin.lock().lines() {
        let line = match line {
            Ok(l) => l,
            Err(e) => {
                eprintln!("tbsim-script: cannot read a request: {e}");
                return std::process::ExitCode::FAILURE;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        let answer = host.answer(&line);
        if writeln!(out, "{answer}")
            .and_then(|()| out.flush())
            .is_err()
        {
            // tbsim went away; nothing is left to answer.
            return std::process::ExitCode::SUCCESS;
        }
    }
    std::process::ExitCode::SUCCESS
}
