//! The human report: one line per check (✔ ×), and for each failure the requirement,
//! Expected and Actual, the decoded conversation and a hex dump.

use std::fmt::Write;

use rpcrdma_codec::hex::Hex;
use rpcrdma_conformance::engine::ctx::Direction;
use rpcrdma_conformance::engine::CheckResult;
use rpcrdma_conformance::expectations::{Judged, Status};

/// The mark and word for a status: ✔ and × in a UTF-8 locale, `+` and `x` otherwise or
/// under `--color never` (see [`crate::output::decide`]).
pub fn mark(status: Status) -> (&'static str, &'static str) {
    let ascii = crate::output::ascii();
    let (pass, fail) = if ascii { ("+", "x") } else { ("✔", "×") };
    match status {
        Status::Pass => (pass, "pass"),
        Status::PassLax => (pass, "pass-lax"),
        Status::ExpectedDivergence => (pass, "expected divergence"),
        Status::Fail => (fail, "FAIL"),
        Status::UnexpectedPass => (fail, "UNEXPECTED PASS"),
        Status::Unsupported => ("-", "unsupported"),
        Status::Skipped => ("-", "skipped"),
        Status::Inconclusive => ("?", "inconclusive"),
        Status::Error => ("!", "HARNESS ERROR"),
    }
}

/// The ANSI colour of a status: green passes, red failures, yellow the rest.
fn colour(status: Status) -> &'static str {
    match status {
        Status::Pass => "32",
        Status::PassLax | Status::ExpectedDivergence | Status::Unsupported | Status::Skipped | Status::Inconclusive => {
            "33"
        }
        Status::Fail | Status::UnexpectedPass | Status::Error => "1;31",
    }
}

/// One line for a finished check.
pub fn line(r: &CheckResult, j: &Judged) -> String {
    let (m, word) = mark(j.status);
    let mut s = format!(
        "{} {} ({}",
        crate::output::paint(m, colour(j.status)),
        r.check.id,
        crate::output::paint(word, colour(j.status))
    );
    if let Some(alive) = r.connection_survived {
        let _ = write!(s, ", connection {}", if alive { "survived" } else { "closed" });
    }
    if let Some(d) = &r.peer.down {
        let then = match &d.restart {
            None => "",
            Some(x) if x.back => "; restarted",
            Some(_) => "; the restart did not bring it back",
        };
        let _ = write!(s, ", peer {}{then}", d.kind.name());
    }
    if let Some(id) = r.peer.down_after {
        let _ = write!(s, ": not run, the peer went down after {id}");
    }
    // Why nothing was judged, or why the pass is lax, on the line itself: the run's one
    // account of it.
    // An unsupported status the judgement gave (a reading not in force) says its own why.
    match (j.status, &j.reason) {
        (Status::Unsupported, Some(why)) => {
            let _ = write!(s, ": {why}");
        }
        (Status::Inconclusive | Status::Unsupported | Status::PassLax, _) => {
            let _ = write!(s, ": {}", r.actual);
        }
        _ => {}
    }
    s.push(')');
    s
}

/// The peer going down after a check, for the details and JUnit: what the probe saw, the
/// restart with its output, and the logs, each line indented by `indent`.
pub fn peer_down(r: &CheckResult, indent: &str) -> String {
    let Some(d) = &r.peer.down else { return String::new() };
    let mut s = format!("{indent}Peer:     {} after this check: {}\n", d.kind.name(), d.detail);
    let block = |s: &mut String, title: &str, lines: &mut dyn Iterator<Item = &str>| {
        let _ = writeln!(s, "{indent}{title}");
        for l in lines {
            let _ = writeln!(s, "{indent}  | {l}");
        }
    };
    if let Some(x) = &d.restart {
        let back = if x.back { "was back" } else { "was not back" };
        let _ = writeln!(
            s,
            "{indent}Restart:  `{}`: {}; the peer {back} after {:.1} s",
            x.run.command,
            x.run.status,
            x.waited.as_secs_f64()
        );
        if !x.run.output.is_empty() {
            block(&mut s, "Restart output:", &mut x.run.output.lines());
        }
    }
    if !d.log.is_empty() {
        block(&mut s, "Peer log while the check ran:", &mut d.log.iter().map(String::as_str));
    }
    if !d.kernel_log.is_empty() {
        block(&mut s, "Kernel log while the check ran:", &mut d.kernel_log.iter().map(String::as_str));
    }
    s
}

/// A classic hex dump, 16 bytes a line.
pub fn hex_dump(bytes: &[u8], indent: &str) -> String {
    let mut s = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let words: Vec<String> = chunk.chunks(4).map(|w| Hex(w).to_string()).collect();
        let _ = writeln!(s, "{indent}{:04x}  {}", i * 16, words.join(" "));
    }
    s
}

/// The details of a check that did not pass.
pub fn details(r: &CheckResult, j: &Judged) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "  -> {} [{}]", r.check.requirement(), r.check.key_word().as_str());
    let _ = writeln!(s, "     Expected: {}", r.expected);
    let _ = writeln!(s, "     Actual:   {}", r.actual);
    if let Some(reason) = &j.reason {
        // A peer that went down is judged so whatever the profile says.
        let label = if r.peer.down.is_some() { "Judged: " } else { "Profile:" };
        let _ = writeln!(s, "     {label}  {reason}");
    }
    s.push_str(&peer_down(r, "     "));
    s.push_str(&transcript(r, "     "));
    s
}

/// A check's conversation, decoded, each message with a hex dump of its first 256 bytes,
/// each line indented by `indent` (the text report's details, JUnit's `<system-out>`).
pub fn transcript(r: &CheckResult, indent: &str) -> String {
    let mut s = String::new();
    let hex_indent = format!("{indent}            ");
    for e in &r.transcript {
        let arrow = match e.direction {
            Direction::Sent => "->",
            Direction::Received => "<-",
            Direction::Event => "..",
        };
        let _ = writeln!(s, "{indent}{:>8.3} ms {arrow} {}", e.at.as_secs_f64() * 1000.0, e.summary);
        if !e.bytes.is_empty() {
            s.push_str(&hex_dump(&e.bytes[..e.bytes.len().min(256)], &hex_indent));
            if e.bytes.len() > 256 {
                let _ = writeln!(s, "{hex_indent}... {} bytes in all", e.bytes.len());
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_conformance::engine::{CheckInfo, Outcome};
    use rpcrdma_conformance::expectations::judge;

    static INFO: CheckInfo = CheckInfo::stub("rfc5666/6.2/conf-rdma");

    fn result(outcome: Outcome, actual: &str) -> CheckResult {
        CheckResult {
            check: &INFO,
            outcome,
            expected: "x".into(),
            actual: actual.to_string().into(),
            connection_survived: None,
            transcript: Vec::new(),
            duration: std::time::Duration::ZERO,
            peer: Default::default(),
        }
    }

    /// Issue 24, edge 1: an unsupported or pass-lax line says why; a plain pass does not.
    #[test]
    fn unsupported_and_lax_lines_say_why() {
        for (outcome, why) in [
            (Outcome::Unsupported, "PROG_UNAVAIL: the peer does not implement CCP"),
            (Outcome::PassLax, "no ERR_CHUNK (SHOULD)"),
            (Outcome::Inconclusive, "no call followed"),
        ] {
            let r = result(outcome, why);
            let l = line(&r, &judge(&r, false, None));
            assert!(l.ends_with(&format!(": {why})")), "{l}");
        }
        let r = result(Outcome::Pass, "fine");
        assert!(!line(&r, &judge(&r, false, None)).contains("fine"));
    }
}
