//! `tbsim-script`, the family-script host: tbsim starts it and speaks to it over
//! its standard input and output, one JSON object per line each way, one answer
//! per request, in order. See [`tbsim_script::protocol`] for the messages.
//!
//! It reads nothing but its standard input and writes nothing but its standard
//! output (and a line on standard error if that breaks); scripts cannot reach
//! either except through `tools` in `solve`. It ends when its input ends, or
//! when tbsim does (a parent-death signal).
//!
//! Requests are served on a thread with a large stack ([`STACK`]): the
//! interpreter recurses on nested values (`str` of a list nested a million deep),
//! and what the host's depth caps cannot see beforehand should run out of this
//! stack as late as possible. If it does run out, this process dies, not tbsim,
//! which reads the reason from standard error and names the bound.

#![deny(unsafe_code)]

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use tbsim_script::tools::Channel;

/// Standard input and output as the host's channel.
struct Stdio {
    input: std::io::BufReader<std::io::Stdin>,
    output: std::io::Stdout,
}

impl Channel for Stdio {
    fn send(&mut self, line: &str) -> std::io::Result<()> {
        let mut out = self.output.lock();
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        out.flush()
    }

    fn recv(&mut self) -> std::io::Result<Option<String>> {
        let mut line = String::new();
        Ok(match self.input.read_line(&mut line)? {
            0 => None,
            _ => Some(line.trim_end_matches(['\r', '\n']).to_owned()),
        })
    }
}

/// The serving thread's stack. Virtual until used; tbsim's address-space limit
/// for the host leaves room for it.
const STACK: usize = 256 << 20;

/// The stack actually asked for: [`STACK`], or a quarter of the address space
/// when a smaller limit is set (`TBSIM_SCRIPT_MEMORY_MB` below about 1 GiB), so a
/// host under a tight bound still starts; the depth caps keep values shallow.
fn stack_size() -> usize {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let limit = rustix::process::getrlimit(rustix::process::Resource::As).current;
        if let Some(bytes) = limit.and_then(|b| usize::try_from(b).ok()) {
            return STACK.min(bytes / 4).max(8 << 20);
        }
    }
    STACK
}

fn main() -> std::process::ExitCode {
    // tbsim reads a dead or killed host's last words for the script's line.
    tbsim_script::position::report_on_stderr();
    // A host whose tbsim died mid-evaluation must not run on alone.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
    // tbsim puts this process under its address-space limit after starting it and
    // before writing the first request: the stack is sized once that request is
    // here, or it would be sized for no limit and leave a tight one no room.
    let mut input = std::io::BufReader::new(std::io::stdin());
    let _ = input.fill_buf();
    let served = std::thread::Builder::new()
        .name("tbsim-script".into())
        .stack_size(stack_size())
        .spawn(move || serve(input))
        .map(|t| t.join());
    match served {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => std::process::ExitCode::FAILURE,
        Err(e) => {
            eprintln!("tbsim-script: cannot start the serving thread: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn serve(input: std::io::BufReader<std::io::Stdin>) -> std::process::ExitCode {
    let chan: Box<dyn Channel> = Box::new(Stdio {
        input,
        output: std::io::stdout(),
    });
    let mut host = tbsim_script::protocol::Host::new(Arc::new(Mutex::new(chan)));
    match host.serve() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // tbsim went away mid-answer; nobody is left to tell but standard error.
        Err(e) => {
            eprintln!("tbsim-script: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
