//! The requirements matrix: every normative statement of the specifications the toolkit
//! checks, with whom it binds, whether a harness can observe it, and the catalogue checks
//! that judge it.
//!
//! The data lives in `conformance/requirements/*.tsv` (one table per specification, columns
//! documented in `conformance/requirements/README.md`), next to the vendored spec texts it
//! quotes. It is compiled in and parsed once. Apart from reading the server check IDs from
//! [`crate::catalogue::all`] (to tell server checks from client checks when computing
//! coverage), this module does not depend on the catalogue.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{json, Value};

use crate::proof::{self, Side};

/// A specification of the matrix: its short name (the first part of requirement and check
/// IDs), the vendored text, and its requirement table.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// `rfc8166`, `v2-01`, ...
    pub name: &'static str,
    /// The file under `conformance/requirements/specs/`.
    pub file: &'static str,
    /// The vendored text, unchanged.
    pub text: &'static str,
    /// The requirement table (TSV).
    pub table: &'static str,
    /// Whether only uppercase key words are normative (BCP 14 with RFC 8174); otherwise the
    /// document cites RFC 2119 alone, where lowercase use is not settled.
    pub rfc8174: bool,
}

macro_rules! spec {
    ($name:literal, $file:literal, $rfc8174:literal) => {
        Spec {
            name: $name,
            file: $file,
            text: include_str!(concat!("../requirements/specs/", $file)),
            table: include_str!(concat!("../requirements/", $name, ".tsv")),
            rfc8174: $rfc8174,
        }
    };
}

/// Every specification of the matrix.
pub static SPECS: [Spec; 8] = [
    spec!("rfc8166", "rfc8166.txt", true),
    spec!("rfc8797", "rfc8797.txt", true),
    // Bidirectional RPC-over-RDMA; `binds` reads by the role on the forward connection
    // (`responder`: the ONC RPC server, which is the reverse-direction requester).
    spec!("rfc8167", "rfc8167.txt", true),
    // The NFS version 4 Upper-Layer Binding: section 6 only.
    spec!("rfc8267", "rfc8267.txt", true),
    spec!("rfc5666", "rfc5666.txt", false),
    spec!("v2-01", "draft-cel-nfsv4-rpcrdma-version-two-01.txt", false),
    spec!("xcharext-02", "draft-dnoveck-nfsv4-rpcrdma-xcharext-02.txt", false),
    spec!("rtrext-03", "draft-dnoveck-nfsv4-rpcrdma-rtrext-03.txt", false),
];

/// The specification named `name`.
pub fn spec(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.name == name)
}

/// The header line every table starts with.
pub const HEADER: &str = "id\tspec\tsection\tkey_word\tnormative\tbinds\tobservable\treason\ttext";

/// A table that also types which checks judge each statement (`checks`, `~id` for in part):
/// what the shipped tables did before the checks declared it (`CheckInfo::judges`); kept for
/// tables made up in tests.
pub const HEADER_WITH_CHECKS: &str = "id\tspec\tsection\tkey_word\tnormative\tbinds\tobservable\tchecks\treason\ttext";

/// Whether a statement's key word is normative.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normative {
    /// An uppercase BCP 14 key word.
    Yes,
    /// A lowercase key word in a document that follows RFC 8174: not normative.
    No,
    /// A lowercase key word in a document that cites RFC 2119 alone.
    Unclear,
}

/// Whom a statement binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binds {
    Requester,
    Responder,
    /// Both peers (sender and receiver alike).
    Both,
    /// An Upper-Layer Binding specification.
    Ulb,
    /// The upper layer (the RPC consumer or ULP implementation).
    UpperLayer,
    /// The RDMA provider.
    RdmaProvider,
    Iana,
    /// Authors of future specifications.
    SpecAuthor,
}

/// Who can observe whether a statement is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Observable {
    /// Acting as requester, judging a responder (`run`).
    Server,
    /// Acting as responder, judging a requester (`serve`).
    Client,
    /// Either way.
    Both,
    /// Only an encoding or decoding rule the codec enforces.
    Codec,
    /// Not observable on the wire; the `reason` column says why.
    None,
}

impl Observable {
    pub fn server(self) -> bool {
        matches!(self, Observable::Server | Observable::Both)
    }

    pub fn client(self) -> bool {
        matches!(self, Observable::Client | Observable::Both)
    }
}

/// A check cited by a requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRef {
    pub id: String,
    /// `~id` in the table: the check tests this statement only in part (the reason column
    /// says what is missing); it does not count towards coverage.
    pub partial: bool,
}

/// One normative statement.
#[derive(Debug, Clone)]
pub struct Requirement {
    /// `rfc8166/4.5.1#1`: spec, section, and ordinal of the statement within the section.
    pub id: String,
    pub spec: String,
    pub section: String,
    /// As written: `MUST NOT`, or lowercase `must` for a statement that is not normative.
    pub key_word: String,
    pub normative: Normative,
    pub binds: Binds,
    pub observable: Observable,
    pub checks: Vec<CheckRef>,
    pub reason: String,
    /// The sentence, whitespace-normalised.
    pub text: String,
}

impl Requirement {
    /// The checks that judge this statement fully.
    pub fn judged_by(&self) -> impl Iterator<Item = &str> {
        self.checks.iter().filter(|c| !c.partial).map(|c| c.id.as_str())
    }

    pub fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "spec": self.spec,
            "section": self.section,
            "key_word": self.key_word,
            "normative": match self.normative {
                Normative::Yes => "yes",
                Normative::No => "no",
                Normative::Unclear => "unclear",
            },
            "binds": binds_name(self.binds),
            "observable": observable_name(self.observable),
            "checks": self.checks.iter().filter(|c| !c.partial).map(|c| c.id.as_str()).collect::<Vec<_>>(),
            "partial_checks": self.checks.iter().filter(|c| c.partial).map(|c| c.id.as_str()).collect::<Vec<_>>(),
            "reason": self.reason,
            "text": self.text,
            // Per side: judged (a proof exists), and each proof: the check, its
            // precondition, and the fault that breaks this statement under which it fails.
            "proven": {
                "server": proofs_json(self, Side::Server),
                "client": proofs_json(self, Side::Client),
            },
        })
    }
}

/// One side's proofs of a statement, for the JSON.
fn proofs_json(r: &Requirement, side: Side) -> Value {
    let proofs: Vec<Value> = proof::proofs(r, side)
        .iter()
        .map(|p| json!({"check": p.check, "precondition": p.precondition, "fault": p.fault, "outcome": p.outcome.name()}))
        .collect();
    json!({"judgeable": proof::judgeable(r, side), "judged": !proofs.is_empty(), "proofs": proofs})
}

/// The TSV's (and the JSON's) name of whom a statement binds.
pub fn binds_name(b: Binds) -> &'static str {
    match b {
        Binds::Requester => "requester",
        Binds::Responder => "responder",
        Binds::Both => "both",
        Binds::Ulb => "ulb",
        Binds::UpperLayer => "upper-layer",
        Binds::RdmaProvider => "rdma-provider",
        Binds::Iana => "iana",
        Binds::SpecAuthor => "spec-author",
    }
}

/// The TSV's (and the JSON's) name of where a statement is observable.
pub fn observable_name(o: Observable) -> &'static str {
    match o {
        Observable::Server => "server",
        Observable::Client => "client",
        Observable::Both => "both",
        Observable::Codec => "codec",
        Observable::None => "none",
    }
}

/// The key words of BCP 14, longest first (so that `MUST NOT` is found before `MUST`).
pub const KEY_WORDS: [&str; 11] = [
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "NOT RECOMMENDED",
    "MUST",
    "SHALL",
    "REQUIRED",
    "SHOULD",
    "RECOMMENDED",
    "MAY",
    "OPTIONAL",
];

/// Parses one table. Errors name the line.
pub fn parse_table(spec: &str, table: &str) -> Result<Vec<Requirement>, String> {
    let mut lines = table.lines().enumerate();
    let typed_checks = match lines.next() {
        Some((_, h)) if h == HEADER => false,
        Some((_, h)) if h == HEADER_WITH_CHECKS => true,
        other => return Err(format!("{spec}: the header line is {:?}, not the documented one", other.map(|l| l.1))),
    };
    let columns = if typed_checks { 10 } else { 9 };
    let mut out = Vec::new();
    for (i, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let at = |what: String| format!("{spec}.tsv line {}: {what}", i + 1);
        let mut f: Vec<&str> = line.split('\t').collect();
        if f.len() != columns {
            return Err(at(format!("{} columns, not {columns}", f.len())));
        }
        if !typed_checks {
            f.insert(7, "");
        }
        let normative = match f[4] {
            "yes" => Normative::Yes,
            "no" => Normative::No,
            "unclear" => Normative::Unclear,
            o => return Err(at(format!("normative {o:?}"))),
        };
        let binds = match f[5] {
            "requester" => Binds::Requester,
            "responder" => Binds::Responder,
            "both" => Binds::Both,
            "ulb" => Binds::Ulb,
            "upper-layer" => Binds::UpperLayer,
            "rdma-provider" => Binds::RdmaProvider,
            "iana" => Binds::Iana,
            "spec-author" => Binds::SpecAuthor,
            o => return Err(at(format!("binds {o:?}"))),
        };
        let observable = match f[6] {
            "server" => Observable::Server,
            "client" => Observable::Client,
            "both" => Observable::Both,
            "codec" => Observable::Codec,
            "none" => Observable::None,
            o => return Err(at(format!("observable {o:?}"))),
        };
        let checks = f[7]
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(|c| match c.strip_prefix('~') {
                Some(id) => CheckRef { id: id.to_string(), partial: true },
                None => CheckRef { id: c.to_string(), partial: false },
            })
            .collect();
        if f[1] != spec {
            return Err(at(format!("spec {:?} in the {spec} table", f[1])));
        }
        out.push(Requirement {
            id: f[0].to_string(),
            spec: f[1].to_string(),
            section: f[2].to_string(),
            key_word: f[3].to_string(),
            normative,
            binds,
            observable,
            checks,
            reason: f[8].to_string(),
            text: f[9].to_string(),
        });
    }
    Ok(out)
}

/// Every requirement, in table order (spec by spec), with the checks that declare they judge
/// it (`CheckInfo::judges`: the arrow points from the check to the statement, and the tables
/// hold no copy of it).
pub fn all() -> &'static [Requirement] {
    static ALL: OnceLock<Vec<Requirement>> = OnceLock::new();
    ALL.get_or_init(|| {
        let mut reqs: Vec<Requirement> = SPECS
            .iter()
            .flat_map(|s| parse_table(s.name, s.table).unwrap_or_else(|e| panic!("requirement table: {e}")))
            .collect();
        for info in crate::catalogue::infos() {
            for (id, partial) in info.judged() {
                if let Some(r) = reqs.iter_mut().find(|r| r.id == id) {
                    r.checks.push(CheckRef { id: info.id.to_string(), partial });
                }
            }
        }
        reqs
    })
}

/// Statements a check declares that are no row of the matrix (a misspelt ID judges nothing).
pub fn undeclared_statements() -> Vec<(&'static str, &'static str)> {
    let mut out = Vec::new();
    for info in crate::catalogue::infos() {
        for (id, _) in info.judged() {
            if by_id(id).is_none() {
                out.push((info.id, id));
            }
        }
    }
    out
}

/// The requirement with this ID.
pub fn by_id(id: &str) -> Option<&'static Requirement> {
    all().iter().find(|r| r.id == id)
}

/// The requirements a check judges (fully), in table order.
pub fn judged_by(check: &str) -> Vec<&'static Requirement> {
    all().iter().filter(|r| r.judged_by().any(|c| c == check)).collect()
}

/// The requirements that cite a check, fully or in part.
pub fn citing(check: &str) -> Vec<&'static Requirement> {
    all().iter().filter(|r| r.checks.iter().any(|c| c.id == check)).collect()
}

/// The checks that judge a requirement (fully).
pub fn checks_for(id: &str) -> Vec<&'static str> {
    by_id(id).map(|r| r.judged_by().collect()).unwrap_or_default()
}

/// Coverage of one side of one specification: observable statements, and those judged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub judged: usize,
    pub total: usize,
}

impl Coverage {
    /// Judged over total, in percent; None when there is nothing to judge.
    pub fn percent(self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.judged as f64 / self.total as f64)
    }
}

/// Coverage for a specification: the server side (statements a harness acting as requester
/// can observe, judged by a `run` check) and the client side (acting as responder, judged by
/// a `serve` check: any cited check that is not a server check).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpecCoverage {
    pub server: Coverage,
    pub client: Coverage,
}

/// Coverage per specification, `judged` deciding whether a side judges a statement. Statements
/// that are not normative (lowercase key words under RFC 8174) are left out, and so is a
/// permission on the side that holds it ([`proof::judgeable`]).
pub fn coverage_by(
    reqs: &[Requirement],
    judged: impl Fn(&Requirement, Side) -> bool,
) -> BTreeMap<String, SpecCoverage> {
    let mut out: BTreeMap<String, SpecCoverage> = BTreeMap::new();
    for r in reqs {
        let e = out.entry(r.spec.clone()).or_default();
        if r.normative == Normative::No {
            continue;
        }
        for (side, observable, c) in
            [(Side::Server, r.observable.server(), &mut e.server), (Side::Client, r.observable.client(), &mut e.client)]
        {
            if observable && proof::judgeable(r, side) {
                c.total += 1;
                c.judged += usize::from(judged(r, side));
            }
        }
    }
    out
}

/// What the tables claim: a side judges a statement when one of its checks is cited in full
/// (`server_checks` names the server side's; any other cited check is a client check).
pub fn coverage_of(reqs: &[Requirement], server_checks: &[&str]) -> BTreeMap<String, SpecCoverage> {
    coverage_by(reqs, |r, side| match side {
        Side::Server => r.judged_by().any(|c| server_checks.contains(&c)),
        Side::Client => r.judged_by().any(|c| !server_checks.contains(&c)),
    })
}

/// What the checks really judge: a statement counts on a side only with a proof (a fault that
/// breaks it making a citing check fail, [`proof::proofs`]).
pub fn coverage_proven(reqs: &[Requirement]) -> BTreeMap<String, SpecCoverage> {
    coverage_by(reqs, proof::judged)
}

/// Coverage per specification of the vendored tables against the catalogue, as proven.
pub fn coverage() -> BTreeMap<String, SpecCoverage> {
    coverage_proven(all())
}

/// The whole matrix as JSON: requirements and coverage (for `list --requirements --json`).
pub fn to_json() -> Value {
    let cov: serde_json::Map<String, Value> = coverage()
        .into_iter()
        .map(|(spec, c)| {
            (
                spec,
                json!({
                    "server": {"judged": c.server.judged, "total": c.server.total},
                    "client": {"judged": c.client.judged, "total": c.client.total},
                }),
            )
        })
        .collect();
    json!({
        "requirements": all().iter().map(Requirement::to_json).collect::<Vec<_>>(),
        "coverage": cov,
    })
}

/// Collapses whitespace runs to one space and joins a hyphen at a line break (`RPC-\n
/// over-RDMA` reads `RPC-over-RDMA`); applied to both the quoted and the quoting text.
pub fn normalise(s: &str) -> String {
    let collapsed = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("- ", "-")
}

/// The lines of an RFC-style text without page footers (`... [Page 12]`), form feeds and
/// the running header after each form feed.
fn page_lines(text: &str) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let mut drop_header = false;
    for line in text.trim_start_matches('\u{feff}').split('\n') {
        let line = line.trim_end_matches('\r');
        if line.contains('\u{c}') {
            drop_header = line.replace('\u{c}', "").trim().is_empty();
            continue;
        }
        if drop_header && !line.trim().is_empty() {
            drop_header = false;
            continue;
        }
        let t = line.trim_end();
        if t.ends_with(']')
            && t.rfind("[Page ").is_some_and(|i| t[i + 6..t.len() - 1].chars().all(|c| c.is_ascii_digit()))
        {
            continue;
        }
        out.push(line);
    }
    out
}

/// The section number of a heading line (`4.5.1.  Title`, `A.1.  Title`, `Appendix A.
/// Title`), if it is one: at column 0, a number ending with a dot, two spaces, a title.
pub fn heading(line: &str) -> Option<&str> {
    let (num, rest) = if let Some(r) = line.strip_prefix("Appendix ") {
        let dot = r.find('.')?;
        (&r[..dot], &r[dot + 1..])
    } else {
        let end = line.find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))?;
        let tok = &line[..end];
        let num = tok.strip_suffix('.')?;
        let mut parts = num.split('.');
        let first = parts.next()?;
        let first_ok =
            first.chars().all(|c| c.is_ascii_digit()) || (first.len() == 1 && first.as_bytes()[0].is_ascii_uppercase());
        if first.is_empty() || !first_ok || !parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) {
            return None;
        }
        (num, &line[end..])
    };
    let title = rest.strip_prefix("  ")?;
    if num.is_empty() || title.trim().is_empty() {
        return None;
    }
    Some(num)
}

/// The sections of an RFC-style text: (number, body without its heading), in order. A
/// section runs from its heading to the next heading (subsections are not part of it).
pub fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in page_lines(text) {
        if let Some(num) = heading(line) {
            out.push((num.to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// The normalised body of section `num` of the vendored text of `spec`.
pub fn section_text(spec: &str, num: &str) -> Option<String> {
    let s = self::spec(spec)?;
    sections(s.text).into_iter().find(|(n, _)| n == num).map(|(_, body)| normalise(&body))
}

/// The BCP 14 key words in `text` (uppercase, whole words, longest match first).
pub fn key_words_in(text: &str) -> Vec<&'static str> {
    key_word_positions(text).into_iter().map(|(_, kw)| kw).collect()
}

/// The BCP 14 key words in `text` with their byte offsets. A key word is a whole word: not
/// part of an identifier such as `RDMA2_OPTIONAL`.
pub fn key_word_positions(text: &str) -> Vec<(usize, &'static str)> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    'outer: while i < text.len() {
        if i == 0 || !word(bytes[i - 1]) {
            for kw in KEY_WORDS {
                if bytes[i..].starts_with(kw.as_bytes()) {
                    let j = i + kw.len();
                    if j == text.len() || !word(bytes[j]) {
                        found.push((i, kw));
                        i = j;
                        continue 'outer;
                    }
                }
            }
        }
        i += 1;
    }
    found
}
