//! The requirements matrix against the vendored spec texts and the catalogue: every quoted
//! statement is in the section it cites, with its key word; every key word of the in-scope
//! sections is quoted by some statement; every cited check exists, and every check is cited;
//! and every catalogue check's own quote is in the section its ID names.

use std::collections::{BTreeMap, BTreeSet};

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::coverage::{self, coverage_of, Coverage};
use rpcrdma_conformance::requirements::{
    self, parse_table, Binds, Normative, Observable, Requirement, HEADER, HEADER_WITH_CHECKS, SPECS,
};

mod spec_text;
use spec_text::{key_word_positions, key_words_in, normalise, section_text, sections};

fn server_ids() -> Vec<&'static str> {
    catalogue::all().iter().map(|c| c.info.id).collect()
}

fn client_ids() -> Vec<&'static str> {
    catalogue::client::all().map(|c| c.info.id).collect()
}

/// The sections a table covers: of RFC 5666 what RFC 8166 does not supersede (RDMA_MSGP in
/// 3.9 and 4.3, CCP in 6); of RFC 8267 the NFS version 4 binding (6); all of the others.
fn in_scope(spec: &str, section: &str) -> bool {
    let within = |tops: &[&str]| tops.iter().any(|s| section == *s || section.starts_with(&format!("{s}.")));
    match spec {
        "rfc5666" => within(&["3.9", "4.3", "6"]),
        "rfc8267" => within(&["6"]),
        _ => true,
    }
}

// ---------------------------------------------------------------------------------------------
// The section splitter and the normalisation, on text made up for the purpose.

const SAMPLE: &str = "\
Front matter MUST be ignored.

1.  Introduction

   The first section.

1.1.  Requirements Language

   Key words.

4.5.1.  Header Version Mismatch

   A Responder MUST reply with an RDMA_ERROR when the RPC-
   over-RDMA version is unknown, and it



Lever, et al.                Standards Track                   [Page 34]
\u{c}
RFC 8166                 RPC-over-RDMA Version 1               June 2017


   MUST NOT close the connection.

   4.6.  Indented headings are not headings

A.1.  Appendix Section

   Text.
";

#[test]
fn splitter_finds_headings_and_drops_page_breaks() {
    let s = sections(SAMPLE);
    let nums: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(nums, ["1", "1.1", "4.5.1", "A.1"]);
    let body = normalise(&s[2].1);
    assert!(
        body.contains("when the RPC-over-RDMA version is unknown, and it MUST NOT close the connection."),
        "{body}"
    );
    assert!(!body.contains("Page 34") && !body.contains("June 2017"), "{body}");
    assert!(body.contains("4.6. Indented headings"), "an indented line is not a heading: {body}");
    assert!(!normalise(&s[0].1).contains("Front matter"));
    assert_eq!(
        key_words_in("it MUST NOT, MAY or MUSTARD; NOT RECOMMENDED RDMA2_OPTIONAL"),
        ["MUST NOT", "MAY", "NOT RECOMMENDED"]
    );
}

#[test]
fn the_vendored_texts_split_into_their_sections() {
    let expect = [
        ("rfc8166", &["4.5.1", "4.5.4", "A.2", "3.4.6.2"][..]),
        ("rfc8797", &["3.2", "4.1", "5.2"]),
        ("rfc5666", &["3.9", "4.3", "6.2"]),
        ("v2-01", &["4.2.2", "5.3"]),
        ("xcharext-02", &["4.3", "A"]),
        ("rtrext-03", &["9.5", "10.2"]),
        ("rfc8167", &["2.4.1", "4.3.2", "5.4", "6", "10"]),
        ("rfc8267", &["6", "6.2.2", "6.4.1", "6.5.2", "6.7.2", "A"]),
    ];
    for (spec, nums) in expect {
        let s = sections(requirements::spec(spec).unwrap().text);
        for n in nums {
            assert!(s.iter().any(|(m, _)| m == n), "{spec}: no section {n}");
        }
        let all: Vec<&String> = s.iter().map(|(n, _)| n).collect();
        let unique: BTreeSet<&String> = all.iter().copied().collect();
        assert_eq!(all.len(), unique.len(), "{spec}: a section number twice: {all:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// The tables.

#[test]
fn tables_parse_and_ids_are_unique_and_well_formed() {
    let all = requirements::all();
    let mut seen = BTreeSet::new();
    for r in all {
        assert!(seen.insert(r.id.as_str()), "duplicate requirement ID {}", r.id);
        let (left, ordinal) = r.id.rsplit_once('#').unwrap_or_else(|| panic!("{}: no #ordinal", r.id));
        assert_eq!(left, format!("{}/{}", r.spec, r.section), "{}: the ID does not name its spec and section", r.id);
        assert!(ordinal.parse::<u32>().is_ok_and(|n| n > 0), "{}", r.id);
        assert!(!r.text.is_empty() && r.text == normalise(&r.text), "{}: text not whitespace-normalised", r.id);
    }
    for s in &SPECS {
        assert!(s.table.starts_with(HEADER), "{}.tsv header", s.name);
        assert!(parse_table(s.name, s.table).is_ok_and(|rows| !rows.is_empty()), "{}", s.name);
    }
    // Ordinals count statements within a section in order: 1, 2, 3 ...
    let mut by_section: BTreeMap<(&str, &str), Vec<u32>> = BTreeMap::new();
    for r in all {
        by_section.entry((&r.spec, &r.section)).or_default().push(r.id.rsplit_once('#').unwrap().1.parse().unwrap());
    }
    for ((spec, section), ords) in by_section {
        assert_eq!(ords, (1..=ords.len() as u32).collect::<Vec<_>>(), "{spec}/{section}");
    }
}

#[test]
fn parse_table_rejects_what_it_should() {
    let good = format!(
        "{HEADER_WITH_CHECKS}\nx/1#1\tx\t1\tMUST\tyes\tresponder\tserver\ta/1/b,~c/2/d\t\tThe peer MUST do it.\n"
    );
    let rows = parse_table("x", &good).unwrap();
    assert_eq!(rows[0].checks.len(), 2);
    assert!(!rows[0].checks[0].partial && rows[0].checks[1].partial);
    assert_eq!(rows[0].judged_by().collect::<Vec<_>>(), ["a/1/b"]);
    for bad in [
        good.replace("\tresponder\t", "\tserver-side\t"),
        good.replace("\tserver\t", "\tmaybe\t"),
        good.replace("\tyes\t", "\tsometimes\t"),
        good.replace("x/1#1\tx\t", "x/1#1\ty\t"),
        good.replace("\t\tThe", "\tThe"),
        good.replace("id\tspec", "id\tthe spec"),
    ] {
        assert!(parse_table("x", &bad).is_err(), "accepted:\n{bad}");
    }
    // The error names the table's line and the value.
    let bad = good.replace("\tresponder\t", "\tserver-side\t");
    assert_eq!(parse_table("x", &bad).unwrap_err(), "x.tsv line 2: binds \"server-side\"");
    // The shipped form: no checks column (the checks declare what they judge).
    let shipped = format!("{HEADER}\nx/1#1\tx\t1\tMUST\tyes\tresponder\tserver\t\tThe peer MUST do it.\n");
    assert!(parse_table("x", &shipped).unwrap()[0].checks.is_empty());
    assert!(parse_table("x", &shipped.replace("\tserver\t", "\tserver\ta/1/b\t")).is_err(), "a typed check column");
}

/// Every statement's text is in the section it cites, verbatim up to whitespace and
/// line-break hyphenation, and holds its key word.
#[test]
fn every_statement_is_quoted_verbatim_with_its_key_word() {
    let mut failures = Vec::new();
    for r in requirements::all() {
        assert!(in_scope(&r.spec, &r.section), "{}: a section outside the table's scope", r.id);
        let Some(body) = section_text(&r.spec, &r.section) else {
            failures.push(format!("{}: no section {} in {}", r.id, r.section, r.spec));
            continue;
        };
        if !body.contains(&normalise(&r.text)) {
            failures.push(format!("{}: not found verbatim in {} section {}: {}", r.id, r.spec, r.section, r.text));
        }
        let found = key_words_in(&r.text);
        match r.normative {
            Normative::Yes => {
                if !found.contains(&r.key_word.as_str()) {
                    failures.push(format!("{}: key word {} not in {found:?}", r.id, r.key_word));
                }
            }
            Normative::No | Normative::Unclear => {
                let rfc8174 = requirements::spec(&r.spec).unwrap().rfc8174;
                let expected = if rfc8174 { Normative::No } else { Normative::Unclear };
                if r.normative != expected {
                    failures.push(format!("{}: a lowercase key word in {} is {expected:?}", r.id, r.spec));
                }
                let lower = r.key_word.to_lowercase();
                if r.key_word != lower || !found.is_empty() || !has_word(&r.text, &lower) {
                    failures.push(format!("{}: lowercase {:?} not found alone in the text", r.id, r.key_word));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
        let after = text[i + word.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
        before && after
    })
}

/// Completeness: every uppercase key word in an in-scope section (other than the key-words
/// boilerplate and code components) lies inside a statement of the table.
#[test]
fn every_key_word_of_the_specs_is_in_a_statement() {
    let mut missing = Vec::new();
    for spec in &SPECS {
        let rows: Vec<&Requirement> = requirements::all().iter().filter(|r| r.spec == spec.name).collect();
        for (num, body) in sections(spec.text) {
            if !in_scope(spec.name, &num) || body.contains("///") {
                continue;
            }
            let text = normalise(&body);
            let mut covered = vec![false; text.len()];
            // The key-words paragraph quotes every key word and is no statement; it is a
            // section of its own, or (RFC 8167) closes the Introduction, so only it is skipped.
            if let Some(start) = text.find("The key words \"MUST\", \"MUST NOT\"") {
                let end = text[start..].find(". ").map_or(text.len(), |e| start + e + 1);
                covered[start..end].iter_mut().for_each(|c| *c = true);
            }
            for r in rows.iter().filter(|r| r.section == num) {
                let quote = normalise(&r.text);
                for (i, _) in text.match_indices(&quote) {
                    covered[i..i + quote.len()].iter_mut().for_each(|c| *c = true);
                }
            }
            for (i, kw) in key_word_positions(&text) {
                if !covered[i] {
                    let ctx = &text[floor(&text, i.saturating_sub(60))..floor(&text, i + 40)];
                    missing.push(format!("{}/{num}: {kw} in \"...{ctx}...\"", spec.name));
                }
            }
        }
    }
    assert!(missing.is_empty(), "key words no statement quotes:\n{}", missing.join("\n"));
}

/// Check IDs in the tables exist; every check is cited; observable statements have a
/// check or a reason, on each side they are observable from.
#[test]
fn checks_and_reasons() {
    let server = server_ids();
    let client = client_ids();
    let mut failures = Vec::new();
    let mut cited = BTreeSet::new();
    for r in requirements::all() {
        for c in &r.checks {
            if !server.contains(&c.id.as_str()) && !client.contains(&c.id.as_str()) {
                failures.push(format!("{}: no check {}", r.id, c.id));
            }
            cited.insert(c.id.as_str());
        }
        let reason = !r.reason.trim().is_empty();
        let full_server = r.judged_by().any(|c| server.contains(&c));
        let full_client = r.judged_by().any(|c| client.contains(&c));
        if r.observable.server() && !full_server && !reason {
            failures.push(format!("{}: server-observable, with neither a server check nor a reason", r.id));
        }
        if r.observable.client() && !full_client && !reason {
            failures.push(format!("{}: client-observable, with neither a client check nor a reason", r.id));
        }
        if matches!(r.observable, Observable::None | Observable::Codec) && !reason {
            failures.push(format!("{}: {:?} without a reason", r.id, r.observable));
        }
        if r.checks.iter().any(|c| c.partial) && !reason {
            failures.push(format!("{}: a partial check without a reason saying what it misses", r.id));
        }
        if matches!(r.observable, Observable::None | Observable::Codec) && !r.checks.is_empty() {
            failures.push(format!("{}: checks for a statement no harness observes", r.id));
        }
        // A server check judges what the harness sees acting as requester, a client check
        // what it sees acting as responder.
        if full_server && !r.observable.server() {
            failures.push(format!("{}: judged by a server check but not server-observable", r.id));
        }
        if full_client && !r.observable.client() {
            failures.push(format!("{}: judged by a client check but not client-observable", r.id));
        }
    }
    for id in server.iter().chain(&client) {
        if !cited.contains(id) {
            failures.push(format!("check {id} judges no requirement"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The lookups agree with the table.
    let some = &requirements::all()[1];
    assert_eq!(requirements::by_id(&some.id).map(|r| &r.text), Some(&some.text));
    for r in requirements::all() {
        for c in r.judged_by() {
            assert!(requirements::judged_by(c).iter().any(|x| x.id == r.id));
            assert!(requirements::checks_for(&r.id).contains(&c));
        }
    }
    assert!(requirements::by_id("rfc8166/99#1").is_none());
}

// ---------------------------------------------------------------------------------------------
// Coverage.

#[test]
fn coverage_counts_by_hand_on_a_small_table() {
    let t = format!(
        "{HEADER_WITH_CHECKS}\n\
         x/1#1\tx\t1\tMUST\tyes\tresponder\tserver\ts1\t\tA MUST.\n\
         x/1#2\tx\t1\tMUST\tyes\tresponder\tserver\t~s1\tpartial\tA MUST.\n\
         x/1#3\tx\t1\tMUST\tyes\tboth\tboth\ts1,c1\t\tA MUST.\n\
         x/1#4\tx\t1\tMUST\tyes\tboth\tboth\tc1\tno server check yet\tA MUST.\n\
         x/1#5\tx\t1\tMUST\tyes\trequester\tclient\t\tnot yet\tA MUST.\n\
         x/1#6\tx\t1\tMAY\tyes\tboth\tnone\t\tpermission\tA MAY.\n\
         x/1#7\tx\t1\tMUST\tyes\tboth\tcodec\t\tXDR\tA MUST.\n"
    );
    let rows = parse_table("x", &t).unwrap();
    let cov = coverage_of(&rows, &["s1"]);
    let x = cov["x"];
    assert_eq!(x.server, Coverage { judged: 2, total: 4 });
    assert_eq!(x.client, Coverage { judged: 2, total: 3 });
    assert_eq!(x.server.percent(), Some(50.0));
    assert_eq!(Coverage { judged: 0, total: 0 }.percent(), None);
    // A statement that is not normative does not count.
    let lower = t.replace("x/1#1\tx\t1\tMUST\tyes", "x/1#1\tx\t1\tmust\tno");
    let x = coverage_of(&parse_table("x", &lower).unwrap(), &["s1"])["x"];
    assert_eq!(x.server, Coverage { judged: 1, total: 3 });
}

/// Recounts coverage from the tables directly and prints it (the report's table).
#[test]
fn coverage_of_the_matrix() {
    let server = server_ids();
    let client = client_ids();
    let mut mine: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    for r in requirements::all() {
        let e = mine.entry(r.spec.as_str()).or_default();
        if r.normative == Normative::No {
            continue;
        }
        let side = |list: &[&str]| r.checks.iter().any(|c| !c.partial && list.contains(&c.id.as_str()));
        // A permission counts only where it must be coped with: a requester's MAY on the
        // server side, a responder's on the client side.
        let permission = matches!(r.key_word.as_str(), "MAY" | "OPTIONAL");
        let (on_server, on_client) = match (permission, r.binds) {
            (true, Binds::Requester | Binds::UpperLayer) => (true, false),
            (true, Binds::Responder) => (false, true),
            _ => (true, true),
        };
        if on_server && matches!(r.observable, Observable::Server | Observable::Both) {
            e[1] += 1;
            e[0] += side(&server) as usize;
        }
        if on_client && matches!(r.observable, Observable::Client | Observable::Both) {
            e[3] += 1;
            e[2] += side(&client) as usize;
        }
    }
    let cov = coverage::coverage();
    let pct = |c: Coverage| c.percent().map_or("   -".to_string(), |p| format!("{p:>3.0}%"));
    eprintln!("{:<12} {:>6} {:>16} {:>16}", "spec", "rows", "server judged", "client judged");
    for s in &SPECS {
        let c = cov[s.name];
        let m = mine[s.name];
        assert_eq!([c.server.judged, c.server.total, c.client.judged, c.client.total], m, "{}", s.name);
        assert!(c.server.judged <= c.server.total && c.client.judged <= c.client.total);
        let rows = requirements::all().iter().filter(|r| r.spec == s.name).count();
        eprintln!(
            "{:<12} {:>6} {:>9}/{:<3}{} {:>9}/{:<3}{}",
            s.name,
            rows,
            c.server.judged,
            c.server.total,
            pct(c.server),
            c.client.judged,
            c.client.total,
            pct(c.client)
        );
    }
    let v = coverage::to_json();
    assert_eq!(v["requirements"].as_array().map(Vec::len), Some(requirements::all().len()));
    assert_eq!(v["coverage"]["rfc8166"]["server"]["total"].as_u64(), Some(mine["rfc8166"][1] as u64));
}

/// Issue 21: a full citation is a claim that the check judges the statement, so it needs its
/// proof: a fault that breaks exactly that statement makes the check fail (pass-lax for a
/// SHOULD). A citation without one must be partial (`~id`) with its reason.
#[test]
fn every_full_citation_is_proven_by_a_fault_that_breaks_the_statement() {
    use rpcrdma_conformance::proof::{proofs, Side};
    let client = client_ids();
    let mut unproven = Vec::new();
    for r in requirements::all() {
        for c in r.judged_by() {
            let side = if client.contains(&c) { Side::Client } else { Side::Server };
            if !proofs(r, side).iter().any(|p| p.check == c) {
                unproven.push(format!("{}: {c} ({side:?}) has no fault that breaks this statement", r.id));
            }
        }
    }
    assert!(unproven.is_empty(), "{}", unproven.join("\n"));
}

/// Every statement a fault declares it breaks is a row of the matrix, and every declaring
/// fault exists: a misspelt ID would silently prove nothing.
#[test]
fn the_faults_declarations_name_real_statements_and_faults() {
    use rpcrdma_peers::requester::RequesterFaults;
    use rpcrdma_peers::responder::Faults;
    for (fault, statements) in Faults::BREAKS {
        assert!(Faults::NAMES.contains(fault), "responder fault {fault}");
        for s in *statements {
            assert!(requirements::by_id(s).is_some(), "{fault} breaks {s}, which is no statement");
        }
    }
    for (fault, statements) in RequesterFaults::BREAKS {
        assert!(RequesterFaults::NAMES.contains(fault), "requester fault {fault}");
        for s in *statements {
            assert!(requirements::by_id(s).is_some(), "{fault} breaks {s}, which is no statement");
        }
    }
}

/// The audit's example: ERR_VERS always writing 1 leaves `rfc8166/4.5.1/vers-mismatch`
/// pass-lax, which proves nothing of a MUST (RFC 8166 4.5's rdma_vers echo); and a permission
/// held by the responder is judged from neither side that holds it.
#[test]
fn a_pass_lax_proves_no_must_and_a_permission_binds_no_one_who_holds_it() {
    use rpcrdma_conformance::proof::{judgeable, proofs, Side};
    let echo = requirements::by_id("rfc8166/4.5#5").unwrap();
    assert!(proofs(echo, Side::Server).iter().all(|p| p.fault != "err-vers-no-echo"));
    let may = requirements::by_id("rfc8166/4.3.3#2").unwrap();
    assert!(!judgeable(may, Side::Server) && judgeable(may, Side::Client));
    let grant = requirements::by_id("rfc8166/3.3.1#2").unwrap();
    assert!(proofs(grant, Side::Server).iter().any(|p| p.fault == "zero-credit"));
}

// ---------------------------------------------------------------------------------------------
// The checks' declarations (`CheckInfo::judges`): the only place the link is typed.

/// Every statement a check declares it judges is a row of the matrix: a misspelt ID would
/// judge nothing and still read as a claim. (The quote and key word a check shows are the
/// matrix's, proven verbatim above, so a check holds no copy to go wrong.)
#[test]
fn every_declared_statement_is_a_row_and_every_check_declares_one() {
    assert_eq!(requirements::undeclared_statements(), Vec::<(&str, &str)>::new());
    for info in catalogue::infos() {
        assert!(!info.judges.is_empty(), "{} judges no statement", info.id);
        assert!(!info.requirement().is_empty(), "{}", info.id);
    }
}

/// RFC 8167's roles (README, Directions): `binds` names the role on the forward connection, so
/// the reverse-direction requester (the ONC RPC server, RFC 8167 2.2) is `responder` and its
/// calls are judged by `run`; the reverse-direction responder (the client) is `requester`,
/// judged by `serve`. A permission of the client (4.1: its reverse-direction credit value) is
/// judged on the server side, which must cope with it.
#[test]
fn rfc8167_binds_by_the_role_on_the_forward_connection() {
    use rpcrdma_conformance::proof::{judgeable, Side};
    let r = |id: &str| requirements::by_id(id).unwrap_or_else(|| panic!("{id}"));
    for id in ["rfc8167/5.1#1", "rfc8167/5.1#2"] {
        assert_eq!((r(id).binds, r(id).observable), (Binds::Responder, Observable::Server), "{id}: the server calls");
    }
    for id in ["rfc8167/5.2#1", "rfc8167/5.2#2", "rfc8167/5.3#2", "rfc8167/5.4#1"] {
        assert_eq!((r(id).binds, r(id).observable), (Binds::Requester, Observable::Client), "{id}: the client");
    }
    let credit = r("rfc8167/4.1#1");
    assert!(judgeable(credit, Side::Server) && !judgeable(credit, Side::Client));
    // RFC 8267 section 6 only, and both documents follow RFC 8174.
    assert!(requirements::all().iter().filter(|r| r.spec == "rfc8267").all(|r| in_scope("rfc8267", &r.section)));
    assert!(requirements::spec("rfc8167").unwrap().rfc8174 && requirements::spec("rfc8267").unwrap().rfc8174);
}
