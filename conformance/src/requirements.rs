//! The requirements matrix: every normative statement of the specifications the toolkit
//! checks, with whom it binds, whether a harness can observe it, and the catalogue checks
//! that judge it.
//!
//! The data lives in `conformance/requirements/*.tsv` (one table per specification, columns
//! documented in `conformance/requirements/README.md`), next to the vendored spec texts it
//! quotes. It is compiled in and parsed once. What the checks cover of it, and its JSON,
//! are [`crate::coverage`]'s; the spec-text tools that prove its quotes are the tests'.

use std::sync::OnceLock;

use rpcrdma_codec::check::KeyWord;

use crate::engine::CheckInfo;

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

rpcrdma_codec::named_enum! {
    /// Whether a statement's key word is normative (the `normative` column).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Normative {
        /// An uppercase BCP 14 key word.
        Yes = "yes",
        /// A lowercase key word in a document that follows RFC 8174: not normative.
        No = "no",
        /// A lowercase key word in a document that cites RFC 2119 alone.
        Unclear = "unclear",
    }
}

rpcrdma_codec::named_enum! {
    /// Whom a statement binds (the `binds` column).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Binds {
        Requester = "requester",
        Responder = "responder",
        /// Both peers (sender and receiver alike).
        Both = "both",
        /// An Upper-Layer Binding specification.
        Ulb = "ulb",
        /// The upper layer (the RPC consumer or ULP implementation).
        UpperLayer = "upper-layer",
        /// The RDMA provider.
        RdmaProvider = "rdma-provider",
        Iana = "iana",
        /// Authors of future specifications.
        SpecAuthor = "spec-author",
    }
}

rpcrdma_codec::named_enum! {
    /// Who can observe whether a statement is kept (the `observable` column).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Observable {
        /// Acting as requester, judging a responder (`run`).
        Server = "server",
        /// Acting as responder, judging a requester (`serve`).
        Client = "client",
        /// Either way.
        Both = "both",
        /// Only an encoding or decoding rule the codec enforces.
        Codec = "codec",
        /// Not observable on the wire; the `reason` column says why.
        None = "none",
    }
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
}

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
        let normative = Normative::from_name(f[4]).ok_or_else(|| at(format!("normative {:?}", f[4])))?;
        let binds = Binds::from_name(f[5]).ok_or_else(|| at(format!("binds {:?}", f[5])))?;
        let observable = Observable::from_name(f[6]).ok_or_else(|| at(format!("observable {:?}", f[6])))?;
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

/// A check's requirement in the matrix's words: the quote and key word a check shows come
/// from the statements it declares it judges (one source, tested verbatim against the specs).
impl CheckInfo {
    /// The requirement as the matrix quotes it: the text of each statement judged in full,
    /// then (marked) those judged in part, each with its ID.
    pub fn requirement(&self) -> String {
        let mut parts: Vec<(bool, String)> = self
            .judged()
            .filter_map(|(id, partial)| {
                let r = by_id(id)?;
                Some((partial, format!("{} ({id}{})", r.text, if partial { ", in part" } else { "" })))
            })
            .collect();
        parts.sort_by_key(|(partial, _)| *partial);
        parts.into_iter().map(|(_, t)| t).collect::<Vec<_>>().join(" ... ")
    }

    /// The strongest key word among the statements judged in full (in part when none is).
    pub fn key_word(&self) -> KeyWord {
        let of = |partial: bool| {
            self.judged()
                .filter(|(_, p)| *p == partial)
                .filter_map(|(id, _)| by_id(id).and_then(|r| key_word_of(&r.key_word)))
                .min_by_key(|k| strength(*k))
        };
        of(false).or_else(|| of(true)).unwrap_or(KeyWord::May)
    }
}

/// A matrix key word as the codec's [`KeyWord`] (lowercase as uppercase; REQUIRED and SHALL
/// as MUST, RECOMMENDED as SHOULD, RFC 2119).
fn key_word_of(s: &str) -> Option<KeyWord> {
    Some(match s.to_ascii_uppercase().as_str() {
        "MUST" | "REQUIRED" | "SHALL" => KeyWord::Must,
        "MUST NOT" | "SHALL NOT" => KeyWord::MustNot,
        "SHOULD" | "RECOMMENDED" => KeyWord::Should,
        "SHOULD NOT" | "NOT RECOMMENDED" => KeyWord::ShouldNot,
        "MAY" => KeyWord::May,
        "OPTIONAL" => KeyWord::Optional,
        _ => return None,
    })
}

/// Strongest first: absolute requirements, then recommendations, then permissions.
fn strength(k: KeyWord) -> u8 {
    match k {
        KeyWord::MustNot | KeyWord::Must => 0,
        KeyWord::ShouldNot | KeyWord::Should => 1,
        KeyWord::May | KeyWord::Optional => 2,
    }
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

#[cfg(test)]
mod key_word_tests {
    use super::*;

    fn info(judges: &'static [&'static str]) -> CheckInfo {
        CheckInfo { judges, ..CheckInfo::stub("x/1/y") }
    }

    // rfc8166/3.3.1#2 is a MUST NOT, #3 a MAY; v2-01/4.2.2#1 says REQUIRED (RFC 2119: MUST).
    #[test]
    fn the_key_word_is_the_strongest_judged_in_full() {
        assert_eq!(info(&["rfc8166/3.3.1#3", "rfc8166/3.3.1#2"]).key_word(), KeyWord::MustNot);
        assert_eq!(info(&["rfc8166/3.3.1#3", "~rfc8166/3.3.1#2"]).key_word(), KeyWord::May);
        assert_eq!(info(&["~rfc8166/3.3.1#2"]).key_word(), KeyWord::MustNot);
        assert_eq!(info(&["v2-01/4.2.2#1"]).key_word(), KeyWord::Must);
        let q = info(&["rfc8166/3.3.1#3", "~rfc8166/3.3.1#2"]).requirement();
        assert!(q.starts_with("The requested and granted credit values MAY"), "{q}");
        assert!(q.ends_with("(rfc8166/3.3.1#2, in part)"), "{q}");
    }
}
