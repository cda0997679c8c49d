//! The journal of a fuzz run (`fuzz --journal FILE`): before each case (and each minimisation
//! trial) is sent, one line holding it as a complete reproducer, classified `kernel-panic`, is
//! appended and flushed. When a case panics the peer's kernel, the machine dies with the
//! harness on it; the journal's last line (written to a device the host keeps, such as a
//! second serial port) is then the case that killed it, and `fuzz-panic` turns it into a
//! finding with the panic read from the console.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use serde_json::{json, Value};

use super::classify::{Class, Kind};
use super::input::Wire;
use super::reproducer::Reproducer;

/// The detail of every journal line: what the line means if it is the last one.
pub const DETAIL: &str = "the last case sent before the peer's machine died";

/// What a journal line records being sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// The liveness probe before the first case (only the liveness NULL); `skipped` cases of
    /// the seed's sequence precede it.
    Probe { skipped: u64 },
    /// Case `n` of the seed's sequence (1-based, skipped cases counted).
    Case(u64),
    /// A minimisation trial (or the final confirmation, trial 0) of the finding of case `n`.
    Trial { case: u64, trial: usize },
    /// Case `n` sent again, alone on a fresh connection: it dropped a kept connection whose
    /// earlier cases sent something malformed or left a call unanswered, and only a drop that
    /// repeats so is its finding.
    Recheck { case: u64 },
}

impl Sent {
    /// The case number a reproducer names.
    pub fn case(self) -> u64 {
        match self {
            Sent::Probe { skipped } => skipped,
            Sent::Case(n) | Sent::Trial { case: n, .. } | Sent::Recheck { case: n } => n,
        }
    }

    /// The `--skip-cases` that resumes the run after this line: past the case it belongs to.
    pub fn skip_to_resume(self) -> u64 {
        self.case()
    }

    fn describe(self) -> String {
        match self {
            Sent::Probe { .. } => "the liveness probe before the first case".into(),
            Sent::Case(n) => format!("case {n}"),
            Sent::Trial { case, trial: 0 } => format!("the confirmation of the minimised finding of case {case}"),
            Sent::Trial { case, trial } => format!("minimisation trial {trial} of the finding of case {case}"),
            Sent::Recheck { case } => {
                format!("the re-check alone, on a fresh connection, of the disconnect of case {case}")
            }
        }
    }
}

/// A journal file (or device): lines appended with one write each, then synced where the file
/// supports it (a serial device does not: that error is ignored, and syncing not tried again).
#[derive(Debug)]
pub struct Journal {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    sync: bool,
    error: Option<String>,
}

impl Journal {
    /// Opens `path` for appending (created when missing).
    pub fn open(path: &Path) -> std::io::Result<Journal> {
        let file = std::fs::OpenOptions::new().append(true).create(true).open(path)?;
        Ok(Journal { state: Mutex::new(State { file, sync: true, error: None }) })
    }

    /// Appends one line (a newline is added) and flushes it to the device.
    pub fn append(&self, line: &str) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        if let Err(e) = s.file.write_all(&buf) {
            s.error.get_or_insert(e.to_string());
            return;
        }
        if s.sync && s.file.sync_data().is_err() {
            // EINVAL on a tty or pipe: the write has reached the device already.
            s.sync = false;
        }
    }

    /// The first write error, if a write failed.
    pub fn error(&self) -> Option<String> {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).error.clone()
    }
}

/// The reproducer a journal line holds: the case as sent, classified `kernel-panic`.
pub fn reproducer(config: &super::Config, peer: String, sent: Sent, wires: &[Wire]) -> Reproducer {
    Reproducer {
        tool_version: config.tool_version.clone(),
        seed: config.seed,
        case: sent.case(),
        peer,
        receive_size: config.options.receive_size,
        send_size: config.options.send_size,
        credits: config.options.credits_requested,
        kind: Kind { class: Class::KernelPanic, detail: DETAIL.into() },
        observed: format!("recorded from the journal before sending {}", sent.describe()),
        original_messages: wires.len(),
        messages: wires.to_vec(),
        preceding: Vec::new(),
        reuse_connections: config.reuse_connections,
        profile: config.options.profile,
        cut_short: None,
    }
}

/// One journal line: the reproducer as compact JSON, with `"journal"` saying what was sent and
/// the `--skip-cases` that resumes after it (`replay` ignores that key).
pub fn line(r: &Reproducer, sent: Sent) -> String {
    case_line(r, sent, &[])
}

/// As [`line`], for a case sent over a connection the cases numbered `after` went over before
/// it (`"after"`; their own lines, earlier in the journal, hold their messages).
pub fn case_line(r: &Reproducer, sent: Sent, after: &[u64]) -> String {
    // Region contents as runs, and no fixups (the placeholders in the bytes give them back,
    // as they gave them when the case was encoded: `Wire::new`): a line goes over a serial
    // port before every case.
    let mut v = r.json(true);
    v["journal"] = json!({"sent": sent.describe(), "skip_cases": sent.skip_to_resume()});
    if !after.is_empty() {
        v["journal"]["after"] = json!(after);
    }
    serde_json::to_string(&v).expect("JSON values serialize")
}

/// The line a run that ends (rather than dies) writes last: no case is to blame after it.
pub fn end_line(seed: u64, cases: u64, ended: &str) -> String {
    json!({"journal": "end", "seed": seed, "cases": cases, "ended": ended}).to_string()
}

/// The line a finding of the run writes once it is minimised: its reproducer, so a machine that
/// dies later in the run does not take the run's earlier findings with it ([`findings`]).
pub fn finding_line(r: &Reproducer) -> String {
    json!({"journal": "finding", "finding": r.to_json()}).to_string()
}

/// The findings a journal's run wrote ([`finding_line`]), in order; torn lines passed over.
pub fn findings(text: &str) -> Vec<Reproducer> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim_matches(['\r', '\0', ' '])).ok())
        .filter(|v| v["journal"] == "finding")
        .filter_map(|v| Reproducer::from_json(&v["finding"]).ok())
        .collect()
}

/// The cases a journal's run sent (its `case N` lines; trials and the probe are not cases) and
/// their messages, each case's counted whole: the one the machine died in may have sent fewer.
/// What a run that resumes after a panic has left of a message budget (`fuzz --max-messages`
/// counts the cases' messages alone, as this does). A torn line counts nothing.
pub fn cases_sent(text: &str) -> (u64, u64) {
    let mut cases = std::collections::HashSet::new();
    let mut messages = 0;
    for (n, v) in case_lines(text) {
        if let Some(m) = v["messages"].as_array().filter(|_| cases.insert(n)) {
            messages += m.len() as u64;
        }
    }
    (cases.len() as u64, messages)
}

/// The journal's lines that sent a case ([`Sent::Case`], not a trial, re-check or probe), each
/// with its case number; torn lines passed over.
fn case_lines(text: &str) -> impl Iterator<Item = (u64, Value)> + '_ {
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim_matches(['\r', '\0', ' '])).ok())
        .filter(|v| v["journal"]["sent"].as_str().is_some_and(|s| s.starts_with("case ")))
        .filter_map(|v| Some((v["case"].as_u64()?, v)))
}

/// The last complete line of a journal as a reproducer, with its `--skip-cases` to resume.
/// A torn last line (the machine died during the write) is passed over for the one before;
/// a run's end line means the machine did not die during that run.
/// Sent over a connection earlier cases went over, its reproducer carries them (`preceding`)
/// from their own lines; a line that cannot be found is an error.
pub fn last_entry(text: &str) -> Result<(Reproducer, u64), String> {
    let (mut r, skip) = last_line(text)?;
    let Some(after) = r.1 else { return Ok((r.0, skip)) };
    // Each case's own line: the latest line that sent it as a case.
    let mut cases = std::collections::HashMap::new();
    for (n, v) in case_lines(text) {
        if let Ok(c) = Reproducer::from_json(&v) {
            cases.insert(n, c.messages);
        }
    }
    for n in after {
        let messages = cases
            .remove(&n)
            .ok_or(format!("the journal has no line for case {n}, sent before the last on its connection"))?;
        r.0.preceding.push((n, messages));
    }
    Ok((r.0, skip))
}

/// The last complete line's reproducer, the cases its journal entry says went before it on its
/// connection, and its `--skip-cases`.
#[allow(clippy::type_complexity)]
fn last_line(text: &str) -> Result<((Reproducer, Option<Vec<u64>>), u64), String> {
    let mut last_error = "the journal holds no line".to_string();
    for line in text.lines().rev().map(|l| l.trim_matches(['\r', '\0', ' '])).filter(|l| !l.is_empty()) {
        let value = serde_json::from_str::<Value>(line);
        if let Some(v) = value.as_ref().ok().filter(|v| v["journal"] == "end") {
            return Err(format!("the run ended ({}) after its last case: no case died with the machine", v["ended"]));
        }
        if value.as_ref().is_ok_and(|v| v["journal"] == "finding") {
            continue;
        }
        let parsed = value.map_err(|e| e.to_string()).and_then(|v| {
            let after = v["journal"]["after"].as_array().map(|a| a.iter().filter_map(Value::as_u64).collect());
            Reproducer::from_json(&v).map(|r| ((r, after), v["journal"]["skip_cases"].as_u64()))
        });
        match parsed {
            Ok((r, skip)) => {
                let skip = skip.unwrap_or(r.0.case);
                return Ok((r, skip));
            }
            Err(e) => last_error = format!("the last line is not a reproducer: {e}"),
        }
    }
    Err(last_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fuzz::{generate, Config};

    #[test]
    fn a_line_is_one_compact_reproducer_that_reads_back() {
        let wires = vec![generate::null_call(7, 32).encode()];
        let r = reproducer(&Config { seed: 9, ..Config::default() }, "p".into(), Sent::Case(12), &wires);
        let l = line(&r, Sent::Case(12));
        assert!(!l.contains('\n'));
        let (back, skip) = last_entry(&format!("{l}\n")).unwrap();
        assert_eq!(back, r);
        assert_eq!((back.case, skip, back.seed), (12, 12, 9));
        assert_eq!(back.kind.class.name(), "kernel-panic");
    }

    #[test]
    fn a_case_sent_after_others_on_its_connection_comes_back_with_them() {
        let config = Config { seed: 9, ..Config::default() };
        let wires = |x: u32| vec![generate::null_call(x, 32).encode()];
        let line_of = |n: u64, after: &[u64]| {
            case_line(&reproducer(&config, "p".into(), Sent::Case(n), &wires(n as u32)), Sent::Case(n), after)
        };
        // Case 3 on a fresh connection; 4 and 5 went on over it; a trial line in between.
        let trial = Sent::Trial { case: 3, trial: 1 };
        let text = [
            line_of(3, &[]),
            line(&reproducer(&config, "p".into(), trial, &wires(77)), trial),
            line_of(4, &[3]),
            line_of(5, &[3, 4]),
        ]
        .join("\n");
        let (r, skip) = last_entry(&text).unwrap();
        assert_eq!((r.case, skip), (5, 5));
        assert_eq!(r.messages, wires(5));
        assert_eq!(r.preceding, vec![(3, wires(3)), (4, wires(4))]);
        // A line it names that the journal lacks is an error, not a case replayed alone.
        let text = [line_of(4, &[3]), line_of(5, &[3, 4])].join("\n");
        assert!(last_entry(&text).unwrap_err().contains("no line for case 3"));
    }

    #[test]
    fn a_line_without_fixups_and_with_runs_gives_back_the_messages_as_sent() {
        let mut rng = crate::fuzz::rng::Rng::new(3);
        let mut xid = 0;
        let mut next = || {
            xid += 1;
            xid
        };
        let (mut regions, mut fixups) = (0, 0);
        for n in 1..200 {
            let mut case: Vec<_> = (0..3).map(|_| generate::message(&mut rng, next())).collect();
            crate::fuzz::mutate::mutate(&mut rng, &mut case, None, &mut next);
            let wires: Vec<Wire> = case.iter().map(|s| s.encode()).collect();
            regions += wires.iter().map(|w| w.regions.len()).sum::<usize>();
            fixups += wires.iter().map(|w| w.fixups.len()).sum::<usize>();
            let l = case_line(&reproducer(&Config::default(), "p".into(), Sent::Case(n), &wires), Sent::Case(n), &[]);
            assert!(!l.contains("\"fixups\"") && !l.contains("\"contents\""));
            assert_eq!(last_entry(&l).unwrap().0.messages, wires, "case {n}");
        }
        assert!(regions > 100 && fixups > 100, "{regions} regions, {fixups} fixups");
    }

    #[test]
    fn findings_read_back_and_are_no_case_to_blame() {
        let wires = vec![generate::null_call(7, 32).encode()];
        let case = reproducer(&Config::default(), "p".into(), Sent::Case(3), &wires);
        let mut found = reproducer(&Config::default(), "p".into(), Sent::Case(3), &wires);
        found.kind = Kind { class: Class::Violation, detail: "malformed-reply".into() };
        found.observed = "seen".into();
        let f = finding_line(&found);
        assert!(!f.contains('\n'));
        let text = format!("{}\n{f}\n{}", line(&case, Sent::Case(3)), &f[..f.len() / 2]);
        assert_eq!(findings(&text), vec![found]);
        // The case before the finding line is the last one sent.
        assert_eq!(last_entry(&text).unwrap().0.case, 3);
        assert!(findings(&line(&case, Sent::Case(3))).is_empty());
    }

    #[test]
    fn cases_sent_counts_each_case_line_once_and_no_trial_probe_or_finding() {
        let config = Config::default();
        let wires = |k: usize| (0..k as u32).map(|x| generate::null_call(x, 32).encode()).collect::<Vec<_>>();
        let at = |sent: Sent, k: usize| line(&reproducer(&config, "p".into(), sent, &wires(k)), sent);
        let mut found = reproducer(&config, "p".into(), Sent::Case(4), &wires(5));
        found.kind = Kind { class: Class::Violation, detail: "malformed-reply".into() };
        let case5 = at(Sent::Case(5), 4);
        let text = [
            at(Sent::Probe { skipped: 2 }, 1),
            at(Sent::Case(3), 2),
            at(Sent::Case(4), 3),
            at(Sent::Trial { case: 4, trial: 1 }, 7),
            finding_line(&found),
            at(Sent::Case(4), 3),                 // the same case journaled twice is one case
            case5[..case5.len() / 2].to_string(), // torn: the machine died writing it
        ]
        .join("\n");
        assert_eq!(cases_sent(&text), (2, 5));
        assert_eq!(cases_sent(&format!("{text}\n{case5}")), (3, 9));
        assert_eq!(cases_sent(""), (0, 0));
    }

    #[test]
    fn a_torn_last_line_falls_back_to_the_one_before_and_empty_is_an_error() {
        let wires = vec![generate::null_call(7, 32).encode()];
        let r = reproducer(&Config::default(), "p".into(), Sent::Trial { case: 3, trial: 2 }, &wires);
        let whole = line(&r, Sent::Trial { case: 3, trial: 2 });
        let text = format!("{whole}\r\n{}", &whole[..whole.len() / 2]);
        assert_eq!(last_entry(&text).unwrap().1, 3);
        assert!(last_entry("").is_err());
        assert!(last_entry("not json\n").is_err());
        let ended = format!("{whole}\n{}\n", end_line(1, 3, "time limit"));
        assert!(last_entry(&ended).unwrap_err().contains("the run ended"));
    }
}
