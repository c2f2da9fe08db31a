//! Writes the seed corpora: `seeds/scenario/` from every bundled scenario file and
//! `seeds/tool_calls/` from busy-day's oracle plans plus hand-made calls.
use std::path::{Path, PathBuf};

fn ron_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| Some(e.ok()?.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            ron_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ron") {
            out.push(p);
        }
    }
}

fn main() -> std::io::Result<()> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let content = root.join("../../content/scenarios");
    let scen = root.join("seeds/scenario");
    let tools = root.join("seeds/tool_calls");
    std::fs::create_dir_all(&scen)?;
    std::fs::create_dir_all(&tools)?;
    let mut files = Vec::new();
    ron_files(&content, &mut files);
    for f in &files {
        let rel = f.strip_prefix(&content).unwrap_or(f);
        let name = rel.to_string_lossy().replace('/', "__");
        std::fs::copy(f, scen.join(name))?;
    }
    let busy = tbsim::scenario::load_file(&content.join("busy-day.ron"))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let seeds = tbsim::fuzz::tool_seeds(&busy.scenario);
    for (i, s) in seeds.iter().enumerate() {
        std::fs::write(tools.join(format!("seed-{i:03}")), s)?;
    }
    println!(
        "{} scenario seeds, {} tool-call seeds",
        files.len(),
        seeds.len()
    );
    Ok(())
}
