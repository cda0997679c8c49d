//! Per-peer expectation profiles: reviewed, measured divergences of one implementation from
//! the specs, each with its reason. Judging a run against a profile: an unlisted divergence
//! fails; a listed one is expected; a listed one that now passes is reported as an
//! unexpected pass (the profile is stale), and fails too, as in TLS-Anvil and tlsfuzzer.

use crate::engine::{CheckResult, DownKind, Outcome};

/// One reviewed divergence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    pub id: String,
    /// The outcome this peer produces (`fail`, `pass-lax` or `unsupported`), or for a check
    /// whose outcome is a race on this peer, the outcomes it produces with how often each was
    /// seen ([`Outcomes`]).
    pub outcome: Outcomes,
    /// Why: what the peer does, and where in its code that comes from.
    pub reason: String,
    /// The peer goes down after this check (`"peer": "crashed"` or `"wedged"`): a known crash
    /// is expected only when listed so; any other divergence entry does not cover one.
    pub peer: Option<DownKind>,
    /// How the reason is known.
    pub evidence: Option<Evidence>,
}

/// How a profile entry's reason is known: what was seen, where in the peer's source, in which
/// exact version, and whether the code path was traced, probed or only read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    /// What was observed, and the report or reproducer it comes from.
    pub observed: String,
    /// The functions and files of the peer's source the reason rests on ("" for none).
    pub source: String,
    /// The exact version of the peer the observation and the source are of: one of the
    /// profile's `measured` versions.
    pub version: String,
    pub how: How,
}

rpcrdma_codec::named_enum! {
    /// How a reason's code path is known.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum How {
        /// Followed while it ran (tracepoints, a debugger, the peer's own debug log).
        Traced = "traced",
        /// Shown by a message sent to test it (a variant of the check's input).
        Probed = "probed",
        /// Read in the source of that exact version, step by step.
        Read = "read",
        /// Read from the observed messages and the named functions, not followed line by line.
        Inferred = "inferred",
    }
}

/// The first string starting with `TODO:` (a `profile init` draft's placeholder), with where
/// it is: `divergence rfc8166/4.5/x: "reason"`, or the top-level key.
fn placeholder(v: &serde_json::Value, at: String) -> Option<(String, String)> {
    match v {
        serde_json::Value::String(s) if s.trim_start().starts_with("TODO:") => Some((at, s.clone())),
        serde_json::Value::Array(a) => a.iter().find_map(|x| placeholder(x, at.clone())),
        serde_json::Value::Object(o) => {
            // Name an entry by its ID (or kind) rather than its index.
            let at = match (o.get("id").and_then(|x| x.as_str()), o.get("kind").and_then(|x| x.as_str())) {
                (Some(id), _) => format!("divergence {id}:"),
                (None, Some(kind)) => format!("finding {kind}:"),
                (None, None) => at,
            };
            o.iter().find_map(|(k, x)| placeholder(x, format!("{at} {k:?}").trim().to_string()))
        }
        _ => None,
    }
}

/// Parses an entry's optional `"evidence": {"observed", "source", "version", "how"}`; the
/// version must be one the profile says it measured.
fn evidence(entry: &str, v: &serde_json::Value, measured: &[String]) -> Result<Option<Evidence>, String> {
    if v.is_null() {
        return Ok(None);
    }
    let o = v.as_object().ok_or(format!("{entry}: \"evidence\" is not a JSON object"))?;
    const KEYS: [&str; 4] = ["observed", "source", "version", "how"];
    if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "{entry}: evidence: unknown key {k:?} (known: {})",
            KEYS.map(|k| format!("{k:?}")).join(", ")
        ));
    }
    let text = |k: &str| -> Result<String, String> {
        match &v[k] {
            serde_json::Value::Null if k == "source" => Ok(String::new()),
            serde_json::Value::String(s) if !s.trim().is_empty() || k == "source" => Ok(s.clone()),
            _ => Err(format!("{entry}: evidence: \"{k}\" missing or not a non-empty string")),
        }
    };
    let version = text("version")?;
    if !measured.contains(&version) {
        return Err(format!(
            "{entry}: evidence of version {version:?}, which the profile's \"measured\" does not list ({})",
            if measured.is_empty() { "none listed".to_string() } else { measured.join(", ") }
        ));
    }
    let how = text("how")?;
    let how = How::from_name(&how).ok_or(format!(
        "{entry}: evidence: how {how:?} is not one of {}",
        How::ALL.iter().map(|h| h.name()).collect::<Vec<_>>().join(", ")
    ))?;
    Ok(Some(Evidence { observed: text("observed")?, source: text("source")?, version, how }))
}

/// A divergence's expected outcomes: one (`"outcome": "fail"`), or, for a check whose outcome
/// is a race on this peer, several with the number of times each was seen when it was measured
/// (`"outcomes": {"fail": 7, "pass": 3}`, from `run --repeat`). Any outcome listed is expected
/// (a pass among them too); any other fails. The counts record the measurement; they are not
/// judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcomes(Vec<(Outcome, Option<u32>)>);

impl Outcomes {
    /// The one outcome of a plain entry.
    pub fn single(o: Outcome) -> Outcomes {
        Outcomes(vec![(o, None)])
    }

    pub fn contains(&self, o: Outcome) -> bool {
        self.0.iter().any(|(x, _)| *x == o)
    }

    /// Each outcome with the times it was seen (None for a single `"outcome"`).
    pub fn iter(&self) -> impl Iterator<Item = (Outcome, Option<u32>)> + '_ {
        self.0.iter().copied()
    }

    /// Several outcomes: the check is a race on this peer.
    pub fn is_race(&self) -> bool {
        self.0.len() > 1
    }

    /// Parses `"outcome"` or `"outcomes"` of the entry `id` (exactly one of them).
    fn from_entry(id: &str, d: &serde_json::Value) -> Result<Outcomes, String> {
        const DIVERGENT: &str = "\"fail\", \"pass-lax\" or \"unsupported\"";
        let name = |o: &str| {
            Outcome::from_name(o)
                .filter(|o| matches!(o, Outcome::Pass | Outcome::PassLax | Outcome::Fail | Outcome::Unsupported))
        };
        match (&d["outcome"], &d["outcomes"]) {
            (serde_json::Value::Null, serde_json::Value::Null) => {
                Err(format!("divergence {id}: missing \"outcome\" (or \"outcomes\" for a race)"))
            }
            (serde_json::Value::Null, serde_json::Value::Object(m)) => {
                let mut out = Vec::new();
                for (k, n) in m {
                    let o = name(k).ok_or(format!(
                        "divergence {id}: outcomes: {k:?} is not \"pass\", \"pass-lax\", \"fail\" or \"unsupported\""
                    ))?;
                    let n = n.as_u64().filter(|&n| n > 0 && n <= u64::from(u32::MAX)).ok_or(format!(
                        "divergence {id}: outcomes: {k:?} has {n}, not the number of times it was seen (1 or more)"
                    ))?;
                    out.push((o, Some(n as u32)));
                }
                if out.iter().all(|(o, _)| *o == Outcome::Pass) {
                    return Err(format!("divergence {id}: outcomes: list at least one of {DIVERGENT}"));
                }
                // Most often seen first.
                out.sort_by_key(|&(o, n)| (std::cmp::Reverse(n), o));
                Ok(Outcomes(out))
            }
            (serde_json::Value::Null, other) => Err(format!(
                "divergence {id}: outcomes {other} is not an object of outcome and times seen ({{\"fail\": 7, \"pass\": 3}})"
            )),
            (serde_json::Value::String(o), serde_json::Value::Null) if o != "pass" => {
                name(o).map(Outcomes::single).ok_or(format!("divergence {id}: outcome {:?} is not {DIVERGENT}", o))
            }
            (o, serde_json::Value::Null) => Err(format!("divergence {id}: outcome {o} is not {DIVERGENT}")),
            _ => Err(format!("divergence {id}: both \"outcome\" and \"outcomes\": give one")),
        }
    }
}

/// `fail`; `fail (seen 7 of 10) or pass (3 of 10)`.
impl std::fmt::Display for Outcomes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let total: u32 = self.0.iter().filter_map(|(_, n)| *n).sum();
        for (i, (o, n)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(" or ")?;
            }
            f.write_str(o.name())?;
            if let Some(n) = n {
                write!(f, " ({}{n} of {total})", if i == 0 { "seen " } else { "" })?;
            }
        }
        Ok(())
    }
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
    /// How the reason is known.
    pub evidence: Option<Evidence>,
}

/// A statement the specs leave open to two readings (docs/architecture.md, "Statements read
/// two ways"): both sides of the catalogue follow the catalogue's reading; a check that judges
/// the other is unsupported unless a profile chooses that reading (`"readings"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// The field read two ways: `rfc5666/6.2/maxrdmaread`.
    pub field: &'static str,
    /// The catalogue's reading, and the other one.
    pub catalogue: &'static str,
    pub other: &'static str,
    /// What each reading says, for the reason a check of the other reading gives.
    pub says: &'static [(&'static str, &'static str)],
    /// Each check judging the field, with the reading it judges.
    pub checks: &'static [(&'static str, &'static str)],
}

/// Every field read two ways.
pub const READINGS: [Reading; 1] = [Reading {
    field: "rfc5666/6.2/maxrdmaread",
    catalogue: "ird",
    other: "ord",
    says: &[
        ("ird", "the sender's IRD: the RDMA Reads its peer may issue against its memory, so a requester's 0 forbids the responder's RDMA Reads"),
        ("ord", "the RDMA Reads the sender itself issues, so a responder's 0 forbids the requester calls that need RDMA Read"),
    ],
    checks: &[("rfc5666/6.2/maxrdmaread-zero", "ird"), ("rfc5666/6.2/requester-no-reads-at-zero", "ord")],
}];

/// The field a check judges under one reading, with that reading.
pub fn reading_of(check: &str) -> Option<(&'static Reading, &'static str)> {
    READINGS.iter().find_map(|r| r.checks.iter().find(|(c, _)| *c == check).map(|&(_, reading)| (r, reading)))
}

/// Whether a check judges the catalogue's reading (or no field read two ways): only those
/// count towards a statement's coverage.
pub fn judges_catalogue_reading(check: &str) -> bool {
    reading_of(check).is_none_or(|(r, reading)| reading == r.catalogue)
}

/// A loaded profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    pub peer: String,
    /// The exact versions of the peer this profile was measured on (a kernel line's profile
    /// applies to the whole line; a version not listed is judged all the same, and reported as
    /// unseen).
    pub measured: Vec<String>,
    pub divergences: Vec<Divergence>,
    pub findings: Vec<KnownFinding>,
    /// `"readings"`: for a field read two ways ([`READINGS`]), the reading this peer is judged
    /// by, when not the catalogue's.
    pub readings: Vec<(String, String)>,
}

impl Expectations {
    /// Parses a profile:
    /// `{"peer": "...", "description": "...", "divergences": [{"id": "...", "outcome": "fail", "reason": "..."}]}`
    /// (`description` optional; a divergence's optional `"peer": "crashed"` or `"wedged"`
    /// says the peer goes down after the check), and optionally known fuzz findings:
    /// `"findings": [{"kind": "violation: ...", "reason": "...", "reproducer": "path"}]`.
    /// `"measured": ["6.12.117-1", ...]` lists the exact versions it was measured on, and each
    /// entry's optional `"evidence"` says how its reason is known ([`Evidence`], of a measured
    /// version). Any other key is refused: a misspelt key would otherwise be ignored silently.
    pub fn from_json(text: &str) -> Result<Expectations, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let top = v.as_object().ok_or("not a JSON object")?;
        if let Some((at, mut text)) = placeholder(&v, String::new()) {
            if let Some((cut, _)) = text.char_indices().nth(60) {
                text = format!("{}...", &text[..cut]);
            }
            return Err(format!(
                "{at} is still a draft's placeholder ({text:?}): replace every \"TODO:\" left by `profile init` \
                 (a reason says what the peer does and where in its source)"
            ));
        }
        const KEYS: [&str; 6] = ["peer", "description", "measured", "divergences", "findings", "readings"];
        if let Some(k) = top.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!("unknown key {k:?} (known: {})", KEYS.map(|k| format!("{k:?}")).join(", ")));
        }
        let peer = v["peer"].as_str().ok_or("missing \"peer\"")?.to_string();
        let measured = match &v["measured"] {
            serde_json::Value::Null => Vec::new(),
            serde_json::Value::Array(a) => a
                .iter()
                .map(|m| m.as_str().filter(|s| !s.trim().is_empty()).map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or("\"measured\" must list versions as non-empty strings")?,
            _ => return Err("\"measured\" is not an array of versions".into()),
        };
        let list = v["divergences"].as_array().ok_or("missing \"divergences\" array")?;
        let mut divergences = Vec::new();
        for (i, d) in list.iter().enumerate() {
            let entry = d.as_object().ok_or(format!("divergence {i}: not a JSON object"))?;
            let id = d["id"].as_str().ok_or(format!("divergence {i}: missing \"id\""))?.to_string();
            const KEYS: [&str; 6] = ["id", "outcome", "outcomes", "reason", "peer", "evidence"];
            if let Some(k) = entry.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(format!(
                    "divergence {id}: unknown key {k:?} (known: {})",
                    KEYS.map(|k| format!("{k:?}")).join(", ")
                ));
            }
            let evidence = evidence(&format!("divergence {id}"), &d["evidence"], &measured)?;
            let peer = match &d["peer"] {
                serde_json::Value::Null => None,
                v => Some(
                    v.as_str()
                        .and_then(DownKind::from_name)
                        .ok_or(format!("divergence {id}: peer {v} is not \"crashed\" or \"wedged\""))?,
                ),
            };
            let outcome = Outcomes::from_entry(&id, d)?;
            let reason = d["reason"].as_str().ok_or(format!("divergence {id}: missing \"reason\""))?.to_string();
            if reason.trim().is_empty() {
                return Err(format!("divergence {id}: the reason is empty"));
            }
            if divergences.iter().any(|x: &Divergence| x.id == id) {
                return Err(format!("divergence {id} is listed twice"));
            }
            divergences.push(Divergence { id, outcome, reason, peer, evidence });
        }
        let findings = match top.get("findings") {
            None => Vec::new(),
            Some(f) => known_findings(f, &measured)?,
        };
        let readings = match top.get("readings") {
            None => Vec::new(),
            Some(r) => readings(r)?,
        };
        Ok(Expectations { peer, measured, divergences, findings, readings })
    }

    /// The reading in force for a field read two ways: the profile's choice, else the
    /// catalogue's.
    pub fn reading(&self, r: &Reading) -> &str {
        self.readings.iter().find(|(f, _)| f == r.field).map_or(r.catalogue, |(_, v)| v.as_str())
    }

    /// Checks that every divergence names a known check (`known(id)`): a misspelt ID would
    /// never match, and so would hide the divergence it was meant to record.
    pub fn check_ids(&self, known: impl Fn(&str) -> bool) -> Result<(), String> {
        match self.divergences.iter().find(|d| !known(&d.id)) {
            Some(d) => Err(format!("divergence {}: no check has this ID (see `rpcrdma-harness list`)", d.id)),
            None => Ok(()),
        }
    }

    /// Whether the profile was measured on this exact version of the peer.
    pub fn has_measured(&self, version: &str) -> bool {
        self.measured.iter().any(|m| m == version)
    }

    pub fn find(&self, id: &str) -> Option<&Divergence> {
        self.divergences.iter().find(|d| d.id == id)
    }

    /// The entry for a fuzz finding of this kind (as printed: `class` or `class: detail`).
    pub fn known_finding(&self, kind: &str) -> Option<&KnownFinding> {
        self.findings.iter().find(|f| f.kind == kind)
    }
}

fn known_findings(v: &serde_json::Value, measured: &[String]) -> Result<Vec<KnownFinding>, String> {
    let list = v.as_array().ok_or("\"findings\" is not an array")?;
    let mut out: Vec<KnownFinding> = Vec::new();
    for (i, f) in list.iter().enumerate() {
        let entry = f.as_object().ok_or(format!("finding {i}: not a JSON object"))?;
        const KEYS: [&str; 4] = ["kind", "reason", "reproducer", "evidence"];
        if let Some(k) = entry.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(format!(
                "finding {i}: unknown key {k:?} (known: {})",
                KEYS.map(|k| format!("{k:?}")).join(", ")
            ));
        }
        let kind = f["kind"].as_str().ok_or(format!("finding {i}: missing \"kind\""))?.to_string();
        let (class, detail) = kind.split_once(": ").unwrap_or((&kind, ""));
        let Some(class) = crate::fuzz::Class::from_name(class) else {
            return Err(format!("finding {kind}: {class:?} is not a finding class"));
        };
        // A kernel signature that still carries line numbers (profiles written before they
        // were dropped) is kept as the fuzzer now signs it.
        let kind = if detail.is_empty() {
            kind
        } else {
            format!("{}: {}", class.name(), crate::fuzz::kernel_log::stable_detail(class, detail))
        };
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
        let evidence = evidence(&format!("finding {kind}"), &f["evidence"], measured)?;
        out.push(KnownFinding { kind, reason, reproducer, evidence });
    }
    Ok(out)
}

rpcrdma_codec::named_enum! {
    /// The final status of a check after `--strict` and the profile.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum Status {
        Pass = "pass",
        /// A SHOULD/MAY deviation, accepted without `--strict`.
        PassLax = "pass-lax",
        /// A divergence the profile lists with this outcome.
        ExpectedDivergence = "expected-divergence",
        Fail = "fail",
        /// The profile lists a divergence, but the check passed.
        UnexpectedPass = "unexpected-pass",
        Unsupported = "unsupported",
        Skipped = "skipped",
        /// Run but not judged: the check's precondition did not happen (see
        /// [`Outcome::Inconclusive`]). The run fails under `--strict` ([`Status::fails`]).
        Inconclusive = "inconclusive",
        /// The check broke: no verdict on the peer (whatever the profile says).
        Error = "error",
    }
}

impl Status {
    /// Whether this status makes the run fail.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Fail | Status::UnexpectedPass)
    }

    /// Whether this status makes a run with this `strict` setting fail: a failure, or under
    /// `--strict` a check left inconclusive (nothing was judged where a verdict was asked).
    pub fn fails(self, strict: bool) -> bool {
        self.is_failure() || (strict && self == Status::Inconclusive)
    }
}

/// A check's judged status, with the profile's reason when one applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    pub status: Status,
    pub reason: Option<String>,
}

/// `"readings": {"rfc5666/6.2/maxrdmaread": "ord"}`: each field one of [`READINGS`], each
/// value one of its two readings.
fn readings(v: &serde_json::Value) -> Result<Vec<(String, String)>, String> {
    let map = v.as_object().ok_or("\"readings\" is not an object of field: reading")?;
    let mut out = Vec::new();
    for (field, value) in map {
        let known: Vec<&str> = READINGS.iter().map(|r| r.field).collect();
        let r = READINGS
            .iter()
            .find(|r| r.field == field)
            .ok_or(format!("readings: unknown field {field:?} (known: {})", known.join(", ")))?;
        let value = value.as_str().filter(|v| [r.catalogue, r.other].contains(v)).ok_or(format!(
            "readings: {field} is read {:?} (the catalogue's reading) or {:?}, not {value}",
            r.catalogue, r.other
        ))?;
        out.push((field.clone(), value.to_string()));
    }
    Ok(out)
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
        Outcome::Inconclusive => Status::Inconclusive,
        Outcome::Error => Status::Error,
    };
    let down = r.peer.down.as_ref().map(|d| d.kind);
    // A check of a reading not in force judges nothing this run asks of the peer.
    if let Some((reading, judged)) = reading_of(r.check.id) {
        let in_force = profile.map_or(reading.catalogue, |p| p.reading(reading));
        // (Unsupported already, it keeps its own why: no CONF_RDMA, say.)
        let judged_here = !matches!(raw, Status::Skipped | Status::Error | Status::Unsupported);
        if judged != in_force && down.is_none() && judged_here {
            let says = |x: &str| reading.says.iter().find(|(n, _)| *n == x).map_or("", |(_, s)| *s);
            let why = format!(
                "this check judges the {judged} reading of {} ({}); this run reads it as {in_force} ({}){}: \
                 a profile's \"readings\" chooses (docs/architecture.md, statements read two ways); its own verdict: {}",
                reading.field,
                says(judged),
                says(in_force),
                if in_force == reading.catalogue { ", the catalogue's reading" } else { ", the profile's choice" },
                r.outcome.name()
            );
            return Judged { status: Status::Unsupported, reason: Some(why) };
        }
    }
    match (listed, raw) {
        (_, Status::Skipped) => Judged { status: Status::Skipped, reason: None },
        (_, Status::Error) if down.is_none() => Judged { status: Status::Error, reason: None },
        (Some(d), _) if d.outcome.contains(r.outcome) && d.peer == down => {
            Judged { status: Status::ExpectedDivergence, reason: Some(d.reason.clone()) }
        }
        (listed, _) if down.is_some() => Judged { status: Status::Fail, reason: Some(went_down(r, listed)) },
        // Not judged: the profile's entry is neither confirmed nor stale.
        (Some(d), Status::Inconclusive) => Judged {
            status: Status::Inconclusive,
            reason: Some(format!("the profile expects {} ({}); this run could not tell", expected(d), d.reason)),
        },
        // A listed outcome (a pass among a race's too), but the entry says the peer goes down.
        (Some(d), s) if d.outcome.contains(r.outcome) => Judged {
            status: if s == Status::PassLax { Status::PassLax } else { Status::Fail },
            reason: Some(format!("the profile expects {} ({}), but the peer stayed up", expected(d), d.reason)),
        },
        (Some(d), Status::Pass) => Judged {
            status: Status::UnexpectedPass,
            reason: Some(format!("the profile expects {} ({}), but the check passed", expected(d), d.reason)),
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
        Some(k) => format!("{} with the peer {} after it", d.outcome, k.name()),
        None => d.outcome.to_string(),
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
    use std::time::Duration;

    fn result(id: &'static str, outcome: Outcome) -> CheckResult {
        let check = Box::leak(Box::new(CheckInfo::stub(id)));
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
    fn a_drafts_todo_placeholders_are_refused_with_the_entry_named() {
        let e = Expectations::from_json(
            r#"{"peer":"p","divergences":[{"id":"a/1/x","outcome":"fail","reason":"TODO: what the peer does"}]}"#,
        )
        .unwrap_err();
        assert!(e.starts_with("divergence a/1/x: \"reason\" is still a draft's placeholder"), "{e}");
        let e = Expectations::from_json(
            r#"{"peer":"p","measured":["1"],"divergences":[{"id":"a/1/x","outcome":"fail","reason":"r",
                "evidence":{"observed":"o","source":" TODO: files","version":"1","how":"read"}}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("a/1/x: \"evidence\" \"source\""), "{e}");
        // "TODO" inside a sentence is not a placeholder.
        Expectations::from_json(
            r#"{"peer":"p","divergences":[{"id":"a/1/x","outcome":"fail","reason":"a TODO: list"}]}"#,
        )
        .unwrap();
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

    #[test]
    fn a_race_lists_its_outcomes_and_any_other_fails() {
        let p = Expectations::from_json(
            r#"{"peer": "p", "divergences": [{"id": "a/1/r", "outcomes": {"pass": 3, "fail": 7}, "reason": "lost"}]}"#,
        )
        .unwrap();
        let d = p.find("a/1/r").unwrap();
        assert!(d.outcome.is_race());
        assert_eq!(d.outcome.to_string(), "fail (seen 7 of 10) or pass (3 of 10)");
        for o in [Outcome::Fail, Outcome::Pass] {
            assert_eq!(judge(&result("a/1/r", o), false, Some(&p)).status, Status::ExpectedDivergence, "{o:?}");
        }
        for o in [Outcome::PassLax, Outcome::Unsupported] {
            let j = judge(&result("a/1/r", o), false, Some(&p));
            assert_eq!(j.status, if o == Outcome::PassLax { Status::PassLax } else { Status::Fail }, "{o:?}");
            assert!(j.reason.as_deref().is_some_and(|r| r.contains(&format!("got {}", o.name()))), "{j:?}");
        }
        // A pass among the outcomes covers no crash.
        assert_eq!(judge(&crashed("a/1/r", Outcome::Pass), false, Some(&p)).status, Status::Fail);
        // The single form is unchanged.
        assert_eq!(Expectations::from_json(PROFILE).unwrap().find("a/1/x").unwrap().outcome.to_string(), "fail");
    }

    #[test]
    fn bad_outcome_lists_are_refused_with_the_entry_named() {
        for (entry, says) in [
            (r#""outcome": "fail", "outcomes": {"fail": 1, "pass": 1}"#, "both"),
            (r#""outcomes": {"pass": 4}"#, "at least one"),
            (r#""outcomes": {"fail": 0, "pass": 1}"#, "1 or more"),
            (r#""outcomes": {"fail": "often", "pass": 1}"#, "1 or more"),
            (r#""outcomes": {"fail": 2, "flaky": 1}"#, "\"flaky\""),
            (r#""outcomes": ["fail", "pass"]"#, "not an object"),
            (r#""outcome": "pass""#, "\"pass\""),
            (r#""peer": "crashed""#, "missing \"outcome\""),
        ] {
            let text = format!(r#"{{"peer": "p", "divergences": [{{"id": "a/1/r", {entry}, "reason": "r"}}]}}"#);
            let e = Expectations::from_json(&text).map(|_| ()).unwrap_err();
            assert!(e.contains("a/1/r") && e.contains(says), "{entry}: {e}");
        }
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

    #[test]
    fn evidence_names_a_measured_version_and_how_it_is_known() {
        let with = |evidence: &str| {
            Expectations::from_json(&format!(
                r#"{{"peer": "p", "measured": ["6.12.117-1"], "divergences": [
                    {{"id": "a/1/x", "outcome": "fail", "reason": "r", "evidence": {evidence}}}]}}"#
            ))
        };
        let p = with(r#"{"observed": "report.json", "source": "svc_rdma_recvfrom.c f()", "version": "6.12.117-1", "how": "traced"}"#)
            .unwrap();
        let e = p.divergences[0].evidence.as_ref().unwrap();
        assert_eq!((e.version.as_str(), e.how), ("6.12.117-1", How::Traced));
        assert!(p.has_measured("6.12.117-1") && !p.has_measured("6.12.118-1"));
        // A version the profile did not measure, a way of knowing we do not name, a missing
        // observation, a key we do not know: each refused, naming the entry.
        let unmeasured = with(r#"{"observed": "o", "version": "6.12.118-1", "how": "read"}"#).unwrap_err();
        assert!(unmeasured.contains("a/1/x") && unmeasured.contains("6.12.118-1"), "{unmeasured}");
        assert!(with(r#"{"observed": "o", "version": "6.12.117-1", "how": "guessed"}"#)
            .unwrap_err()
            .contains("guessed"));
        assert!(with(r#"{"version": "6.12.117-1", "how": "read"}"#).unwrap_err().contains("observed"));
        assert!(with(r#"{"observed": "o", "version": "6.12.117-1", "how": "read", "line": 3}"#)
            .unwrap_err()
            .contains("\"line\""));
        assert!(Expectations::from_json(r#"{"peer": "p", "measured": [""], "divergences": []}"#).is_err());
    }

    #[test]
    fn a_kernel_finding_written_with_line_numbers_matches_as_signed_now() {
        let p = Expectations::from_json(
            r#"{"peer": "p", "divergences": [], "findings": [
                {"kind": "kernel-report: WARNING at include/linux/sunrpc/svc.h:520 svc_process", "reason": "r"},
                {"kind": "violation: rfc8166/4.5.2/xid-mismatch", "reason": "r"}]}"#,
        )
        .unwrap();
        assert!(p.known_finding("kernel-report: WARNING at include/linux/sunrpc/svc.h svc_process").is_some());
        assert!(p.known_finding("violation: rfc8166/4.5.2/xid-mismatch").is_some());
    }

    /// Issue 21, section 3: RFC 5666 6.2's maxrdmaread has one reading in the catalogue (IRD);
    /// the check of the other (ORD) is unsupported unless a profile chooses it, and then the
    /// IRD check is. Its own verdict stays in the reason.
    #[test]
    fn a_check_of_the_other_reading_is_judged_only_when_a_profile_chooses_it() {
        let (ird, ord) = ("rfc5666/6.2/maxrdmaread-zero", "rfc5666/6.2/requester-no-reads-at-zero");
        assert!(judges_catalogue_reading(ird) && !judges_catalogue_reading(ord));
        assert!(judges_catalogue_reading("rfc8166/4.2.4/null-call"));
        // No profile, or one that does not choose: the catalogue's reading.
        let plain = Expectations::from_json(r#"{"peer": "p", "divergences": []}"#).unwrap();
        for profile in [None, Some(&plain)] {
            assert_eq!(judge(&result(ird, Outcome::Fail), false, profile).status, Status::Fail);
            for outcome in [Outcome::Pass, Outcome::Fail] {
                let j = judge(&result(ord, outcome), false, profile);
                assert_eq!(j.status, Status::Unsupported);
                let why = j.reason.unwrap();
                assert!(why.contains("judges the ord reading") && why.contains("reads it as ird"), "{why}");
                assert!(why.ends_with(&format!("its own verdict: {}", outcome.name())), "{why}");
            }
        }
        // The profile chooses ORD: the ORD check is judged, the IRD one is not.
        let ord_profile = Expectations::from_json(
            r#"{"peer": "p", "divergences": [], "readings": {"rfc5666/6.2/maxrdmaread": "ord"}}"#,
        )
        .unwrap();
        assert_eq!(judge(&result(ord, Outcome::Fail), false, Some(&ord_profile)).status, Status::Fail);
        assert_eq!(judge(&result(ord, Outcome::Pass), false, Some(&ord_profile)).status, Status::Pass);
        let j = judge(&result(ird, Outcome::Fail), false, Some(&ord_profile));
        assert_eq!(j.status, Status::Unsupported);
        assert!(j.reason.unwrap().contains("the profile's choice"));
        // Skipped stays skipped, unsupported keeps its own why; an unknown field or reading is
        // refused.
        assert_eq!(judge(&result(ord, Outcome::Skipped), false, None).status, Status::Skipped);
        assert_eq!(judge(&result(ord, Outcome::Unsupported), false, None).reason, None);
        let bad = |r: &str| Expectations::from_json(&format!(r#"{{"peer": "p", "divergences": [], "readings": {r}}}"#));
        assert!(bad(r#"{"rfc5666/6.2/maxrdmaread": "both"}"#).unwrap_err().contains("\"ird\""));
        assert!(bad(r#"{"rfc5666/6.2/maxreads": "ord"}"#).unwrap_err().contains("unknown field"));
        assert!(bad(r#"["ord"]"#).is_err());
    }
}
