//! `rpcrdma-harness list`: the checks with their requirements (client checks, judged by
//! `serve`, marked), their groups, or the requirements matrix.

use clap::Args;

use crate::exit::{usage, Ending, Outcome};
use crate::outln;
use crate::output::plural;
use crate::select::{entries, id_matches, Entry};

#[derive(Debug, Args)]
pub struct ListArgs {
    /// IDs, prefixes or groups to list.
    #[arg(value_name = "SELECTOR")]
    select: Vec<String>,
    /// Also print each requirement, the acceptable outcomes and the rationale.
    #[arg(short, long)]
    verbose: bool,
    /// Print one JSON object: `{"checks": [...]}` with every field (and `client`).
    #[arg(long, conflicts_with = "groups")]
    json: bool,
    /// List the groups (for selectors) with how many checks each has.
    #[arg(long)]
    groups: bool,
    /// Print the requirements matrix instead: coverage per spec and side, then every
    /// normative statement with the checks that judge it or why none does yet. Selectors
    /// here are spec or section prefixes (`rfc8797`, `rfc8166/4.5`).
    #[arg(long, conflicts_with = "groups")]
    requirements: bool,
}

/// `list --requirements`: the matrix, as text or JSON.
fn list_requirements(args: &ListArgs) -> Outcome {
    use rpcrdma_conformance::{coverage, requirements};
    let chosen: Vec<&requirements::Requirement> = requirements::all()
        .iter()
        .filter(|r| args.select.is_empty() || args.select.iter().any(|s| id_matches(&r.id.replace('#', "/"), &[], s)))
        .collect();
    if chosen.is_empty() {
        let specs: Vec<&str> = requirements::SPECS.iter().map(|s| s.name).collect();
        return Err(usage(format!("{:?} matches no requirement (specs: {})", args.select, specs.join(", "))));
    }
    if args.json {
        let mut v = coverage::to_json();
        v["requirements"] = serde_json::Value::Array(chosen.iter().map(|r| r.to_json()).collect());
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
        return Ok(Ending::AsExpected);
    }
    let pct = |c: coverage::Coverage| match c.percent() {
        Some(p) => format!("{}/{} ({p:.0}%)", c.judged, c.total),
        None => "-".to_string(),
    };
    // The coverage of what the selection names (every statement without one), with a total.
    // Judged as proven: a fault that breaks the statement makes a citing check fail.
    let owned: Vec<requirements::Requirement> = chosen.iter().map(|r| (*r).clone()).collect();
    let coverage = coverage::coverage_proven(&owned);
    outln!("{:<14} {:>16} {:>16}", "spec", "server judged", "client judged");
    let mut all = coverage::SpecCoverage::default();
    for (spec, c) in &coverage {
        outln!("{:<14} {:>16} {:>16}", spec, pct(c.server), pct(c.client));
        all.server.judged += c.server.judged;
        all.server.total += c.server.total;
        all.client.judged += c.client.judged;
        all.client.total += c.client.total;
    }
    if coverage.len() > 1 {
        outln!("{:<14} {:>16} {:>16}", "all", pct(all.server), pct(all.client));
    }
    outln!();
    for r in &chosen {
        let judged: Vec<&str> = r.judged_by().collect();
        let reason = r.reason.strip_prefix("not yet judged: ").unwrap_or(&r.reason);
        let by = if judged.is_empty() { format!("not judged: {reason}") } else { judged.join(", ") };
        let (binds, observable) = (r.binds.name(), r.observable.name());
        outln!("{}  [{}] binds {binds}, observable {observable}: {by}", r.id, r.key_word);
        if args.verbose {
            outln!("    {}", r.text);
        }
    }
    outln!("{}", plural(chosen.len(), "requirement", "requirements"));
    Ok(Ending::AsExpected)
}

/// `rpcrdma-harness list`: every check with its requirement; client checks (judged by
/// `serve`) are marked `[client]`.
pub fn list(args: ListArgs) -> Outcome {
    if args.requirements {
        return list_requirements(&args);
    }
    let all = entries();
    for s in &args.select {
        if !all.iter().any(|e| id_matches(e.info.id, e.info.groups, s)) {
            return Err(usage(format!("{s:?} matches no check")));
        }
    }
    let chosen: Vec<Entry> = all
        .into_iter()
        .filter(|e| args.select.is_empty() || args.select.iter().any(|s| id_matches(e.info.id, e.info.groups, s)))
        .collect();
    if args.groups {
        // Per group: the checks `run` runs (server) and those `serve` judges (client).
        let mut groups: Vec<(&str, usize, usize)> = Vec::new();
        for e in &chosen {
            for g in e.info.groups {
                let i = match groups.iter().position(|(n, _, _)| n == g) {
                    Some(i) => i,
                    None => {
                        groups.push((g, 0, 0));
                        groups.len() - 1
                    }
                };
                if e.client {
                    groups[i].2 += 1;
                } else {
                    groups[i].1 += 1;
                }
            }
        }
        groups.sort();
        for (g, server, client) in &groups {
            let by = match (server, client) {
                (_, 0) => format!("{}, run by `run`", plural(*server, "check", "checks")),
                (0, _) => format!("{}, judged by `serve`", plural(*client, "client check", "client checks")),
                _ => format!("{} run by `run`, {} judged by `serve`", plural(*server, "check", "checks"), client),
            };
            outln!("{g}  ({by})");
        }
        outln!("{}", plural(groups.len(), "group", "groups"));
        return Ok(Ending::AsExpected);
    }
    if args.json {
        let checks: Vec<serde_json::Value> = chosen
            .iter()
            .map(|e| {
                serde_json::json!({
                    "id": e.info.id,
                    "key_word": e.info.key_word().as_str(),
                    "requirement": e.info.requirement(),
                    "acceptable": e.info.acceptable,
                    "rationale": e.info.rationale,
                    "precondition": e.info.precondition,
                    "groups": e.info.groups,
                    "client": e.client,
                })
            })
            .collect();
        let v = serde_json::json!({ "checks": checks });
        outln!("{}", serde_json::to_string_pretty(&v).expect("JSON values serialize"));
        return Ok(Ending::AsExpected);
    }
    for e in &chosen {
        let client = if e.client { "  [client: judged by serve]" } else { "" };
        outln!("{}  [{}]  ({}){client}", e.info.id, e.info.key_word().as_str(), e.info.groups.join(", "));
        if args.verbose {
            outln!("    requirement: {}", e.info.requirement());
            outln!("    acceptable:  {}", e.info.acceptable);
            outln!("    rationale:   {}", e.info.rationale);
            if let Some(p) = e.info.precondition {
                outln!("    precondition: {p}");
            }
        }
    }
    let clients = chosen.iter().filter(|e| e.client).count();
    outln!("{} ({} client)", plural(chosen.len(), "check", "checks"), clients);
    Ok(Ending::AsExpected)
}
