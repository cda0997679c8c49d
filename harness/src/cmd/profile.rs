//! `rpcrdma-harness profile init --from REPORT.json`: a draft expectation profile from a run's
//! JSON report, so adding a peer starts from what it did instead of an empty file. Each check
//! whose raw outcome diverged (`fail`, `pass-lax`, `unsupported`, or any outcome after which the
//! peer went down) becomes an entry with what was seen; every reason, and what else a person
//! must write, is a `TODO:` placeholder that `--expect` refuses until it is replaced.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{json, Map, Value};

use crate::exit::{Ending, HarnessError, Outcome};
use crate::outln;

/// The placeholder of a divergence's reason (refused by the profile loader).
pub const TODO_REASON: &str = "TODO: what the peer does and where in its source (functions and files)";

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Write a draft expectation profile from a run's JSON report (`run --json`, `serve
    /// --json`): one divergence per check that failed, passed laxly, was unsupported or
    /// brought the peer down, each with what was seen and a TODO reason to fill in.
    Init(InitArgs),
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// The JSON report (schema rpcrdma-harness/report/v1).
    #[arg(long, value_name = "REPORT.json")]
    pub from: PathBuf,
    /// The profile's `peer` name (default: the output file's name without .json).
    #[arg(long, value_name = "NAME")]
    pub peer: Option<String>,
    /// Write the draft here (refused when the file exists: a reviewed profile is never
    /// overwritten); default standard output.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn run(cmd: ProfileCommand) -> Outcome {
    let ProfileCommand::Init(args) = cmd;
    init(&args).map_err(HarnessError::Usage)?;
    Ok(Ending::AsExpected)
}

/// The raw outcomes a profile entry can list.
const LISTABLE: [&str; 4] = ["pass", "pass-lax", "fail", "unsupported"];
const DIVERGENT: [&str; 3] = ["pass-lax", "fail", "unsupported"];

fn init(args: &InitArgs) -> Result<(), String> {
    if let Some(out) = &args.output {
        if out.exists() {
            return Err(format!(
                "-o {}: exists; a draft never overwrites a profile (remove it or pick another name)",
                out.display()
            ));
        }
    }
    let text = crate::input::read_text(&args.from, "report", crate::input::MAX_REPORT)?;
    let report: Value =
        serde_json::from_str(&text).map_err(|e| format!("report {}: not JSON: {e}", args.from.display()))?;
    if report["schema"] != "rpcrdma-harness/report/v1" {
        return Err(format!(
            "report {}: not an rpcrdma-harness report (schema {}, want \"rpcrdma-harness/report/v1\")",
            args.from.display(),
            report["schema"]
        ));
    }
    let checks = report["checks"].as_array().ok_or(format!("report {}: no \"checks\" array", args.from.display()))?;
    let version = report["peer_version"].as_str().filter(|v| !v.trim().is_empty());
    let command_line = report["command_line"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let source = format!("`rpcrdma-harness {command_line}` ({})", args.from.display());

    let mut divergences = Vec::new();
    let mut not_listable = Vec::new();
    for c in checks {
        let id = c["id"].as_str().ok_or(format!("report {}: a check without an \"id\"", args.from.display()))?;
        let outcome = c["outcome"].as_str().unwrap_or("");
        let down = c["peer"]["event"].as_str();
        // A race measured with --repeat: the outcomes seen, with their counts.
        let seen: Vec<(&str, u64)> = c["outcomes"]
            .as_object()
            .map(|m| m.iter().filter_map(|(k, n)| Some((k.as_str(), n.as_u64()?))).collect())
            .unwrap_or_default();
        let race = seen.len() > 1 && seen.iter().any(|(o, _)| DIVERGENT.contains(o));
        if !race && !DIVERGENT.contains(&outcome) && down.is_none() {
            continue;
        }
        if !race && !DIVERGENT.contains(&outcome) {
            // Went down after a pass, an inconclusive or a broken check: no entry can say so.
            not_listable.push(format!("{id} ({outcome}, then the peer {})", down.unwrap_or("went down")));
            continue;
        }
        let mut entry = Map::new();
        entry.insert("id".into(), json!(id));
        if race {
            let mut m = Map::new();
            for (o, n) in &seen {
                if LISTABLE.contains(o) {
                    m.insert(o.to_string(), json!(n));
                }
            }
            entry.insert("outcomes".into(), Value::Object(m));
        } else {
            entry.insert("outcome".into(), json!(outcome));
        }
        entry.insert("reason".into(), json!(TODO_REASON));
        if let Some(d) = down {
            entry.insert("peer".into(), json!(d));
        }
        let mut observed = format!("{source}: {}", c["actual"].as_str().unwrap_or(""));
        if let Some(d) = c["peer"]["detail"].as_str() {
            observed += &format!("; then the peer {}: {d}", down.unwrap_or("went down"));
        }
        if race {
            let counts: Vec<String> = seen.iter().map(|(o, n)| format!("{o} {n}")).collect();
            observed +=
                &format!(" (outcomes of {} attempts: {})", seen.iter().map(|(_, n)| n).sum::<u64>(), counts.join(", "));
        }
        entry.insert(
            "evidence".into(),
            json!({
                "observed": observed,
                "source": "TODO: the functions and files of the peer's source the reason rests on",
                "version": version.unwrap_or("TODO: the exact version that ran"),
                "how": "inferred",
            }),
        );
        divergences.push(Value::Object(entry));
    }

    let peer = match (&args.peer, &args.output) {
        (Some(p), _) => p.clone(),
        (None, Some(o)) => o.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
        (None, None) => "TODO: the peer's name (the profile's file name without .json)".into(),
    };
    let draft = json!({
        "peer": peer,
        "description": format!(
            "TODO: what the peer is (implementation, exact version, transport) and how it was measured. Drafted by \
             `rpcrdma-harness profile init` from {source}, against {} over {}.",
            report["peer"].as_str().unwrap_or("?"),
            report["transport"].as_str().unwrap_or("?")
        ),
        "measured": [version.unwrap_or("TODO: the exact version that ran")],
        "divergences": divergences,
    });
    let mut out = serde_json::to_string_pretty(&draft).expect("JSON values serialize");
    out.push('\n');
    match &args.output {
        None => crate::output::stdout_str(&out),
        Some(path) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| format!("-o {}: {e}", path.display()))?;
            f.write_all(out.as_bytes()).map_err(|e| format!("-o {}: {e}", path.display()))?;
        }
    }
    let n = divergences.len();
    let msg = format!(
        "{} drafted from {} checks; replace every \"TODO:\" (the reasons: what the peer does and where in its \
         source; the evidence; the description{}) before `--expect` accepts it",
        crate::output::plural(n, "divergence", "divergences"),
        checks.len(),
        if version.is_none() { "; the measured version: the report has no peer_version (--peer-version)" } else { "" }
    );
    if args.output.is_some() {
        outln!("{msg}");
    } else {
        crate::errln!("{msg}");
    }
    for x in &not_listable {
        crate::errln!("warning: not drafted: {x}; a profile cannot expect that, so it stays a failure");
    }
    Ok(())
}
