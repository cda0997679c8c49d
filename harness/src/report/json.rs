//! The JSON report (schema `rpcrdma-harness/report/v1`, documented in docs/report-schema.md).

use serde_json::{json, Value};

use rpcrdma_codec::hex::Hex;
use rpcrdma_conformance::engine::ctx::Direction;
use rpcrdma_conformance::engine::{Actual, Mismatch, NoMessage, PeerDown};

use super::{JudgedResult, Run};

pub const SCHEMA: &str = "rpcrdma-harness/report/v1";

pub fn render(run: &Run<'_>) -> Value {
    let t = run.totals();
    let checks: Vec<Value> = run
        .checks
        .iter()
        .map(|JudgedResult { result: r, judged: j }| {
            let transcript = transcript(r);
            json!({
                "id": r.check.id,
                "section": r.check.id.rsplit_once('/').map_or(r.check.id, |(s, _)| s),
                "key_word": r.check.key_word().as_str(),
                "requirement": r.check.requirement(),
                "requirements": rpcrdma_conformance::requirements::judged_by(r.check.id)
                    .iter()
                    .map(|q| q.id.as_str())
                    .collect::<Vec<_>>(),
                "status": j.status.name(),
                "precondition": r.check.precondition,
                "outcome": r.outcome.name(),
                "expected": r.expected,
                "actual": r.actual.to_string(),
                "mismatch": mismatch(&r.actual),
                "divergence_reason": j.reason,
                "connection_survived": r.connection_survived,
                "peer": r.peer.down.as_ref().map(peer_down),
                "not_run_after": r.peer.down_after,
                "kernel_log": (!r.peer.kernel_log.is_empty()).then_some(&r.peer.kernel_log),
                "duration_ms": r.duration.as_secs_f64() * 1000.0,
                "transcript": transcript,
            })
        })
        .collect();
    let mut report = json!({
        "schema": SCHEMA,
        "tool": { "name": "rpcrdma-harness", "version": super::VERSION, "revision": super::REVISION },
        "command": run.meta.command,
        "command_line": run.meta.command_line,
        "selection": { "select": run.meta.select, "exclude": run.meta.exclude },
        "profile_path": run.meta.profile_path,
        "wire_profile": run.meta.wire_profile,
        "root_fh": run.meta.root_fh.as_ref().map(|r| json!({
            "hex": r.hex(),
            "source": r.source.name(),
            "export": match &r.source { crate::mount::Source::Mount(path) => Some(path.as_str()), _ => None },
        })),
        "peer": run.peer,
        "transport": run.transport,
        "strict": run.strict,
        "expectations": run.expectations,
        "interrupted": run.interrupted,
        "started_unix": run.started_unix,
        "duration_ms": run.duration.as_secs_f64() * 1000.0,
        "summary": { "passed": t.passed, "expected_divergences": t.expected, "pass_lax": t.lax, "failed": t.failed, "skipped": t.skipped, "unsupported": t.unsupported, "inconclusive": t.inconclusive, "errors": t.errors, "not_run": t.not_run, "total": run.checks.len() },
        "checks": checks,
    });
    for (k, v) in run.meta.peer_version.json_fields() {
        report[k] = v;
    }
    // A run that ended before judging anything says why, with its exit status.
    if let Some((code, message)) = &run.meta.failure {
        report["error"] = json!({"exit_status": code, "message": message});
    }
    repeated(run, &mut report);
    report
}

/// `run --repeat N`: the report's `"repeat": N`, and in each check's entry `"outcomes"` (how
/// many attempts had each outcome) and `"attempts"` (each attempt's status, outcome, actual,
/// reason, duration and transcript). The entry's own fields are its representative attempt's;
/// its `status` is the check's over all attempts. Nothing is added to a run without repeats.
fn repeated(run: &Run<'_>, report: &mut Value) {
    let Some(n) = run.meta.attempts.first().map(Vec::len) else { return };
    report["repeat"] = json!(n);
    for (entry, attempts) in report["checks"].as_array_mut().into_iter().flatten().zip(&run.meta.attempts) {
        let mut outcomes = serde_json::Map::new();
        for c in attempts {
            let seen = outcomes.entry(c.result.outcome.name()).or_insert(json!(0));
            *seen = json!(seen.as_u64().unwrap_or(0) + 1);
        }
        entry["outcomes"] = Value::Object(outcomes);
        entry["attempts"] = attempts
            .iter()
            .enumerate()
            .map(|(k, JudgedResult { result: r, judged: j })| {
                json!({
                    "attempt": k + 1,
                    "status": j.status.name(),
                    "outcome": r.outcome.name(),
                    "actual": r.actual.to_string(),
                    "mismatch": mismatch(&r.actual),
                    "divergence_reason": j.reason,
                    "connection_survived": r.connection_survived,
                    "peer": r.peer.down.as_ref().map(peer_down),
                    "duration_ms": r.duration.as_secs_f64() * 1000.0,
                    "transcript": transcript(r),
                })
            })
            .collect();
    }
}

fn transcript(r: &rpcrdma_conformance::engine::CheckResult) -> Vec<Value> {
    r.transcript
        .iter()
        .map(|e| {
            json!({
                "direction": match e.direction {
                    Direction::Sent => "sent",
                    Direction::Received => "received",
                    Direction::Event => "event",
                },
                "at_us": e.at.as_micros() as u64,
                "summary": e.summary,
                "hex": Hex(&e.bytes).to_string(),
            })
        })
        .collect()
}

/// The peer going down after a check: `{"event": "crashed", "detail", "log", "kernel_log", "restart"}`.
fn peer_down(d: &PeerDown) -> Value {
    json!({
        "event": d.kind.name(),
        "detail": d.detail,
        "log": d.log,
        "kernel_log": d.kernel_log,
        "restart": d.restart.as_ref().map(|r| json!({
            "command": r.run.command,
            "status": r.run.status,
            "output": r.run.output,
            "back": r.back,
            "waited_ms": r.waited.as_secs_f64() * 1000.0,
        })),
    })
}

/// What a matcher found, kept typed beside `actual`'s sentence: `{"kind": "wrong-xid", "got":
/// ..., "want": ...}`, the fields of the mismatch (a decode error as `decode --json` gives it);
/// null when the check worded what happened itself.
pub fn mismatch(actual: &Actual) -> Value {
    let Actual::Mismatch(m) = actual else { return Value::Null };
    let no_message = |n: &NoMessage| match n {
        NoMessage::Silence => json!({"kind": "silence"}),
        NoMessage::Disconnected => json!({"kind": "disconnected"}),
        NoMessage::SendFailed(s) => json!({"kind": "send-failed", "status": s.name()}),
        NoMessage::RecvFailed(s) => json!({"kind": "recv-failed", "status": s.name()}),
    };
    match m {
        Mismatch::Connect(e) => json!({"kind": "connect", "error": e.to_string()}),
        Mismatch::NoMessage(n) => json!({"kind": "no-message", "why": no_message(n)}),
        Mismatch::Undecodable(e) => json!({"kind": "undecodable", "error": crate::describe::error(e)}),
        Mismatch::WrongXid { form, got, want } => json!({"kind": "wrong-xid", "form": form, "got": got, "want": want}),
        Mismatch::WrongBody { got, want } => json!({"kind": "wrong-body", "got": got, "want": want}),
        Mismatch::ZeroCredit => json!({"kind": "zero-credit"}),
        Mismatch::WrongVersion { form, got } => json!({"kind": "wrong-version", "form": form, "got": got}),
        Mismatch::ErrVersVersion { got, sent } => json!({"kind": "err-vers-version", "got": got, "sent": sent}),
        Mismatch::ErrVersOrder { low, high } => json!({"kind": "err-vers-order", "low": low, "high": high}),
        Mismatch::ErrVersWithoutOne { low, high } => {
            json!({"kind": "err-vers-without-one", "low": low, "high": high})
        }
        Mismatch::RpcUndecodable(e) => json!({"kind": "rpc-undecodable", "error": crate::describe::error(e)}),
        Mismatch::NoRpc => json!({"kind": "no-rpc"}),
        Mismatch::AcceptStat { got, want } => {
            json!({"kind": "accept-stat", "got": got.name(), "want": want.name()})
        }
        Mismatch::Denied { why, want } => json!({"kind": "denied", "why": why, "want": want.name()}),
        Mismatch::RpcXid { got } => json!({"kind": "rpc-xid", "got": got}),
        Mismatch::RpcCall => json!({"kind": "rpc-call"}),
        Mismatch::Other(text) => json!({"kind": "other", "text": text}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rpcrdma_codec::rpc::AcceptStat;

    /// The typed mismatch stays structured beside its sentence; a check's own words have none.
    #[test]
    fn a_mismatch_keeps_its_fields() {
        let m = Actual::Mismatch(Mismatch::WrongXid { form: "RDMA_MSG".into(), got: 7, want: 0x1234 });
        assert_eq!(mismatch(&m), json!({"kind": "wrong-xid", "form": "RDMA_MSG", "got": 7, "want": 0x1234}));
        let m = Actual::Mismatch(Mismatch::AcceptStat { got: AcceptStat::ProcUnavail, want: AcceptStat::Success });
        assert_eq!(mismatch(&m), json!({"kind": "accept-stat", "got": "PROC_UNAVAIL", "want": "SUCCESS"}));
        let m = Actual::Mismatch(Mismatch::NoMessage(NoMessage::Silence));
        assert_eq!(mismatch(&m)["why"]["kind"], "silence");
        assert_eq!(mismatch(&Actual::Note("the check's words".into())), Value::Null);
    }
}
