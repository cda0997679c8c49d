//! Per-peer expectation profiles: reviewed, measured divergences of one implementation from
//! the specs, each with its reason. Judging a run against a profile: an unlisted divergence
//! fails; a listed one is expected; a listed one that now passes is reported as an
//! unexpected pass (the profile is stale), and fails too, as in TLS-Anvil and tlsfuzzer.

use crate::engine::{CheckResult, DownKind, Outcome};

/// One reviewed divergence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub id: String,
    /// The outcome this peer produces: `fail`, `pass-lax` or `unsupported`.
    pub outcome: Outcome,
    /// Why: what the peer does, and where in its code that comes from.
    pub reason: String,
    /// The peer goes down after this check (`"peer": "crashed"` or `"wedged"`): a known crash
    /// is expected only when listed so; any other divergence entry does not cover one.
    pub peer: Option<DownKind>,
}

/// A reviewed fuzz finding of this peer: known, so it does not fail a fuzz run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownFinding {
    /// The finding's kind as the fuzzer prints it: `class` or `class: detail` (a panic that
    /// killed the peer's machine: `kernel-panic: ` and the panic's signature, as `fuzz-panic`
    /// prints it).
    pub kind: String,
    /// What the peer does, and where in its code.
    pub reason: String,
    /// The reproducer in the repository, when there is one.
    pub reproducer: Option<String>,
}

/// A loaded profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    pub peer: String,
    pub divergences: Vec<Divergence>,
    pub findings: Vec<KnownFinding>,
}

impl Expectations {
    /// Parses a profile:
    /// `{"peer": "...", "description": "...", "divergences": [{"id": "...", "outcome": "fail", "reason": "..."}]}`
    /// (`description` optional; a divergence's optional `"peer": "crashed"` or `"wedged"`
    /// says the peer goes down after the check), and optionally known fuzz findings:
    /// `"findings": [{"kind": "violation: ...", "reason": "...", "reproducer": "path"}]`.
    /// Any other key is refused: a misspelt key would otherwise be ignored silently.
    pub fn from_json(text: &str) -> Result<Expectations, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let top = v.as_object().ok_or("not a JSON object")?;
        if let Some(k) = top.keys().find(|k| !["peer", "description", "divergences", "findings"].contains(&k.as_str()))
        {
            return Err(format!("unknown key {k:?} (known: \"peer\", \"description\", \"divergences\", \"findings\")"));
        }
        let peer = v["peer"].as_str().ok_or("missing \"peer\"")?.to_string();
        let list = v["divergences"].as_array().ok_or("missing \"divergences\" array")?;
        let mut divergences = Vec::new();
        for (i, d) in list.iter().enumerate() {
            let entry = d.as_object().ok_or(format!("divergence {i}: not a JSON object"))?;
            let id = d["id"].as_str().ok_or(format!("divergence {i}: missing \"id\""))?.to_string();
            if let Some(k) = entry.keys().find(|k| !["id", "outcome", "reason", "peer"].contains(&k.as_str())) {
                return Err(format!(
                    "divergence {id}: unknown key {k:?} (known: \"id\", \"outcome\", \"reason\", \"peer\")"
                ));
            }
            let peer = match &d["peer"] {
                serde_json::Value::Null => None,
                v => Some(
                    v.as_str()
                        .and_then(DownKind::from_name)
                        .ok_or(format!("divergence {id}: peer {v} is not \"crashed\" or \"wedged\""))?,
                ),
            };
            let outcome = match &d["outcome"] {
                serde_json::Value::String(o) if o == "fail" => Outcome::Fail,
                serde_json::Value::String(o) if o == "pass-lax" => Outcome::PassLax,
                serde_json::Value::String(o) if o == "unsupported" => Outcome::Unsupported,
                serde_json::Value::Null => return Err(format!("divergence {id}: missing \"outcome\"")),
                other => {
                    return Err(format!(
                        "divergence {id}: outcome {other} is not \"fail\", \"pass-lax\" or \"unsupported\""
                    ))
                }
            };
            let reason = d["reason"].as_str().ok_or(format!("divergence {id}: missing \"reason\""))?.to_string();
            if reason.trim().is_empty() {
                return Err(format!("divergence {id}: the reason is empty"));
            }
            if divergences.iter().any(|x: &Divergence| x.id == id) {
                return Err(format!("divergence {id} is listed twice"));
            }
            divergences.push(Divergence { id, outcome, reason, peer });
        }
        let findings = match top.get("findings") {
            None => Vec::new(),
            Some(f) => known_findings(f)?,
        };
        Ok(Expectations { peer, divergences, findings })
    }

    /// Checks that every divergence names a known check (`known(id)`): a misspelt ID would
    /// never match, and so would hide the divergence it was meant to record.
    pub fn check_ids(&self, known: impl Fn(&str) -> bool) -> Result<(), String> {
        match self.divergences.iter().find(|d| !known(&d.id)) {
            Some(d) => Err(format!("divergence {}: no check has this ID (see `rpcrdma-harness list`)", d.id)),
            None => Ok(()),
        }
    }

    pub fn find(&self, id: &str) -> Option<&Divergence> {
        self.divergences.iter().find(|d| d.id == id)
    }

    /// The entry for a fuzz finding of this kind (as printed: `class` or `class: detail`).
    pub fn known_finding(&self, kind: &str) -> Option<&KnownFinding> {
        self.findings.iter().find(|f| f.kind == kind)
    }
}

fn known_findings(v: &serde_json::Value) -> Result<Vec<KnownFinding>, String> {
    let list = v.as_array().ok_or("\"findings\" is not an array")?;
    let mut out: Vec<KnownFinding> = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let entry = f.as_object().ok_or(format!("finding {i}: not a JSON object"))?;
        if let Some(k) = entry.keys().find(|k| !["kind", "reason", "reproducer"].contains(&k.as_str())) {
            return Err(format!("finding {i}: unknown key {k:?} (known: \"kind\", \"reason\", \"reproducer\")"));
        }
        let kind = f["kind"].as_str().ok_or(format!("finding {i}: missing \"kind\""))?.to_string();
        let class = kind.split(": ").next().unwrap_or("");
        if crate::fuzz::Class::from_name(class).is_none() {
            return Err(format!("finding {kind}: {class:?} is not a finding class"));
        }
        let reason = f["reason"].as_str().unwrap_or("").trim().to_string();
        if reason.is_empty() {
            return Err(format!("finding {kind}: missing or empty \"reason\""));
        }
        let reproducer = match &f["reproducer"] {
            serde_json::Value::Null => None,
            serde_json::Value::String(s) => Some(s.clone()),
            _ => return Err(format!("finding {kind}: \"reproducer\" is not a string")),
        };
        if out.iter().any(|x| x.kind == kind) {
            return Err(format!("finding {kind} is listed twice"));
        }
        out.push(KnownFinding { kind, reason, reproducer });
    }
    Ok(out)
}

/// The final status of a check after `--strict` and the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Pass,
    /// A SHOULD/MAY deviation, accepted without `--strict`.
    PassLax,
    /// A divergence the profile lists with this outcome.
    ExpectedDivergence,
    Fail,
    /// The profile lists a divergence, but the check passed.
    UnexpectedPass,
    Unsupported,
    Skipped,
    /// The check broke: no verdict on the peer (whatever the profile says).
    Error,
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::PassLax => "pass-lax",
            Status::ExpectedDivergence => "expected-divergence",
            Status::Fail => "fail",
            Status::UnexpectedPass => "unexpected-pass",
            Status::Unsupported => "unsupported",
            Status::Skipped => "skipped",
            Status::Error => "error",
        }
    }

    /// Whether this status makes the run fail.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Fail | Status::UnexpectedPass)
    }
}

/// A check's judged status, with the profile's reason when one applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub status: Status,
    pub reason: Option<String>,
}

/// Judges one result. A check after which the peer went down fails whatever its own verdict
/// (a server must not crash on any input), unless the profile lists that event for it.
pub fn judge(r: &CheckResult, strict: bool, profile: Option<&Expectations>) -> Judged {
    let listed = profile.and_then(|p| p.find(r.check.id));
    let raw = match r.outcome {
        Outcome::Pass => Status::Pass,
        Outcome::PassLax if strict => Status::Fail,
        Outcome::PassLax => Status::PassLax,
        Outcome::Fail => Status::Fail,
        Outcome::Unsupported => Status::Unsupported,
        Outcome::Skipped => Status::Skipped,
        Outcome::Error => Status::Error,
    };
    let down = r.peer.down.as_ref().map(|d| d.kind);
    match (listed, raw) {
        (_, Status::Skipped) => Judged { status: Status::Skipped, reason: None },
        (_, Status::Error) if down.is_none() => Judged { status: Status::Error, reason: None },
        (Some(d), _) if d.outcome == r.outcome && d.peer == down => {
            Judged { status: Status::ExpectedDivergence, reason: Some(d.reason.clone()) }
        }
        (listed, _) if down.is_some() => Judged { status: Status::Fail, reason: Some(went_down(r, listed)) },
        (Some(d), Status::Pass) => Judged {
            status: Status::UnexpectedPass,
            reason: Some(format!("the profile expects {} ({}), but the check passed", expected(d), d.reason)),
        },
        (Some(d), s) if d.outcome == r.outcome => Judged {
            status: if s == Status::PassLax { Status::PassLax } else { Status::Fail },
            reason: Some(format!("the profile expects {} ({}), but the peer stayed up", expected(d), d.reason)),
        },
        (Some(d), s) => Judged {
            status: if s == Status::PassLax { Status::PassLax } else { Status::Fail },
            reason: Some(format!("the profile expects {} ({}), got {}", expected(d), d.reason, r.outcome.name())),
        },
        (None, s) => Judged { status: s, reason: None },
    }
}

/// A divergence's expected outcome in words: `fail`, `fail with the peer crashed`.
fn expected(d: &Divergence) -> String {
    match d.peer {
        Some(k) => format!("{} with the peer {} after it", d.outcome.name(), k.name()),
        None => d.outcome.name().to_string(),
    }
}

/// Why a check after which the peer went down fails.
fn went_down(r: &CheckResult, listed: Option<&Divergence>) -> String {
    let kind = r.peer.down.as_ref().map_or("went down", |d| d.kind.name());
    let mut s = format!(
        "the peer {kind} after this check (its own verdict: {}): a server must not crash or hang on any \
         input, but report what it cannot process (RFC 8166 4.5, and this check's requirement)",
        r.outcome.name()
    );
    if let Some(d) = listed {
        s += &format!("; the profile expects {} ({})", expected(d), d.reason);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{CheckInfo, CheckResult};
    use rpcrdma_codec::check::KeyWord;
    use std::time::Duration;

    fn result(id: &'static str, outcome: Outcome) -> CheckResult {
        let check = Box::leak(Box::new(CheckInfo {
            id,
            requirement: "",
            key_word: KeyWord::Must,
            acceptable: "",
            rationale: "",
            groups: &[],
            broken_by: &[],
        }));
        CheckResult {
            check,
            outcome,
            expected: String::new(),
            actual: "".into(),
            connection_survived: None,
            transcript: Vec::new(),
            duration: Duration::ZERO,
            peer: Default::default(),
        }
    }

    const PROFILE: &str = r#"{"peer": "p", "divergences": [
        {"id": "a/1/x", "outcome": "fail", "reason": "does X"},
        {"id": "a/1/y", "outcome": "pass-lax", "reason": "skips Y"}]}"#;

    #[test]
    fn unlisted_fail_listed_expected_stale_unexpected() {
        let p = Expectations::from_json(PROFILE).unwrap();
        assert_eq!(judge(&result("a/1/z", Outcome::Fail), false, Some(&p)).status, Status::Fail);
        assert_eq!(judge(&result("a/1/x", Outcome::Fail), false, Some(&p)).status, Status::ExpectedDivergence);
        assert_eq!(judge(&result("a/1/x", Outcome::Pass), false, Some(&p)).status, Status::UnexpectedPass);
        assert_eq!(judge(&result("a/1/y", Outcome::PassLax), true, Some(&p)).status, Status::ExpectedDivergence);
    }

    #[test]
    fn strict_turns_lax_into_fail() {
        assert_eq!(judge(&result("a", Outcome::PassLax), false, None).status, Status::PassLax);
        assert_eq!(judge(&result("a", Outcome::PassLax), true, None).status, Status::Fail);
    }

    #[test]
    fn bad_profiles_are_refused() {
        assert!(Expectations::from_json("{}").is_err());
        assert!(Expectations::from_json(r#"{"peer":"p","divergences":[{"id":"x","outcome":"pass","reason":"r"}]}"#)
            .is_err());
        assert!(Expectations::from_json(r#"{"peer":"p","divergences":[{"id":"x","outcome":"fail","reason":" "}]}"#)
            .is_err());
    }

    #[test]
    fn unknown_keys_and_ids_are_refused_with_the_entry_named() {
        let e = Expectations::from_json(r#"{"peer":"p","divergences":[],"divergence":[]}"#).unwrap_err();
        assert!(e.contains("\"divergence\""), "{e}");
        let e = Expectations::from_json(
            r#"{"peer":"p","divergences":[{"id":"a/1/x","outcome":"fail","reason":"r","reasn":"typo"}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("a/1/x") && e.contains("\"reasn\""), "{e}");
        let e =
            Expectations::from_json(r#"{"peer":"p","divergences":[{"id":"a/1/x","outcome":"explode","reason":"r"}]}"#)
                .unwrap_err();
        assert!(e.contains("\"explode\"") && !e.contains("Some("), "{e}");
        let p = Expectations::from_json(PROFILE).unwrap();
        assert!(p.check_ids(|id| id.starts_with("a/1/")).is_ok());
        let e = p.check_ids(|id| id == "a/1/x").unwrap_err();
        assert!(e.contains("a/1/y"), "{e}");
    }

    fn crashed(id: &'static str, outcome: Outcome) -> CheckResult {
        let mut r = result(id, outcome);
        r.peer.down = Some(crate::engine::PeerDown {
            kind: DownKind::Crashed,
            detail: "a new connection failed".into(),
            log: Vec::new(),
            kernel_log: Vec::new(),
            restart: None,
        });
        r
    }

    #[test]
    fn a_peer_that_went_down_fails_the_check_unless_the_profile_lists_the_crash() {
        let unlisted = judge(&crashed("a/1/z", Outcome::Pass), false, None);
        assert_eq!(unlisted.status, Status::Fail);
        assert!(unlisted.reason.as_deref().is_some_and(|r| r.contains("crashed") && r.contains("RFC 8166 4.5")));
        // A plain divergence entry does not cover a crash.
        let p = Expectations::from_json(PROFILE).unwrap();
        assert_eq!(judge(&crashed("a/1/x", Outcome::Fail), false, Some(&p)).status, Status::Fail);
        let p = Expectations::from_json(
            r#"{"peer": "p", "divergences": [{"id": "a/1/x", "outcome": "fail", "peer": "crashed", "reason": "SIGSEGV"}]}"#,
        )
        .unwrap();
        assert_eq!(p.divergences[0].peer, Some(DownKind::Crashed));
        let known = judge(&crashed("a/1/x", Outcome::Fail), false, Some(&p));
        assert_eq!((known.status, known.reason.as_deref()), (Status::ExpectedDivergence, Some("SIGSEGV")));
        // Listed as a crash: staying up is a stale entry, as a pass is.
        let stayed = judge(&result("a/1/x", Outcome::Fail), false, Some(&p));
        assert_eq!(stayed.status, Status::Fail);
        assert!(stayed.reason.as_deref().is_some_and(|r| r.contains("stayed up")), "{stayed:?}");
        assert_eq!(judge(&result("a/1/x", Outcome::Pass), false, Some(&p)).status, Status::UnexpectedPass);
        let e = Expectations::from_json(
            r#"{"peer": "p", "divergences": [{"id": "a/1/x", "outcome": "fail", "peer": "exploded", "reason": "r"}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("\"exploded\""), "{e}");
    }

    #[test]
    fn a_kernel_panic_finding_can_be_listed() {
        let p = Expectations::from_json(
            r#"{"peer": "p", "divergences": [], "findings": [{"kind": "kernel-panic: BUG: kernel NULL pointer dereference in frwr_unmap_sync", "reason": "r"}]}"#,
        )
        .unwrap();
        assert!(p.known_finding("kernel-panic: BUG: kernel NULL pointer dereference in frwr_unmap_sync").is_some());
        assert!(p.known_finding("kernel-panic: Oops in frwr_unmap_sync").is_none());
    }
}
