//! The catalogue's own quotes: every check's `requirement` is in the section its ID names,
//! with its key word (see conformance/requirements/README.md, "Check quotes").

use std::collections::BTreeMap;

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::requirements::{self, key_words_in, normalise, section_text, SPECS};

use super::{client_ids, has_word, server_ids};

/// Checks whose `requirement` quote is not (yet) in the section their ID names, or whose
/// `key_word` is not the key word of the quoted text. The catalogue is being redesigned by
/// its owner; each entry is fixed there (new ID or new quote) and then removed here. The
/// test fails for a mis-citation not listed, and for a listed check that is no longer one.
const KNOWN_MISCITED: &[&str] = &[];

/// Why a check's quote is mis-cited, or None. A piece of the quote (pieces are joined with
/// "...") may start with a cross-reference naming where it comes from: "(4.1)" for another
/// section of the same spec, "(RFC 8166 4.5.1)" or "(v2-01 4.2.2)" for another spec.
fn miscitation(id: &str, quote: &str, key_word: &str) -> Option<String> {
    let mut parts = id.split('/');
    let (spec, section) = (parts.next()?, parts.next()?);
    let mut problems = Vec::new();
    let mut key_word_found = false;
    for piece in quote.split("...").map(str::trim).filter(|p| !p.is_empty()) {
        let (mut s, mut sec, mut text) = (spec.to_string(), section.to_string(), piece);
        if let Some(rest) = piece.strip_prefix('(') {
            if let Some((r, after)) = rest.split_once(')') {
                let (which, num) = r.rsplit_once(' ').map_or((None, r), |(w, n)| (Some(w), n));
                let named = match which {
                    None => Some(spec.to_string()),
                    Some(w) => {
                        let w = w.to_lowercase().replace(' ', "");
                        SPECS.iter().find(|x| x.name == w).map(|x| x.name.to_string())
                    }
                };
                if let (Some(n), true) = (named, num.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')) {
                    (s, sec, text) = (n, num.to_string(), after.trim());
                }
            }
        }
        let Some(body) = section_text(&s, &sec) else {
            problems.push(format!("no section {s} {sec}"));
            continue;
        };
        if !body.contains(&normalise(text)) {
            problems.push(format!("not in {s} {sec}: {text:?}"));
        }
        let rfc8174 = requirements::spec(&s).is_some_and(|x| x.rfc8174);
        if key_words_in(text).contains(&key_word)
            || (!rfc8174 && key_words_in(text).is_empty() && has_word(text, &key_word.to_lowercase()))
        {
            key_word_found = true;
        }
    }
    if !key_word_found {
        problems.push(format!("key word {key_word} is not the key word of the quoted text"));
    }
    (!problems.is_empty()).then(|| problems.join("; "))
}

#[test]
fn miscitation_finder_finds_what_it_should() {
    let q = "The granted value MUST NOT be zero, since such a value would result in deadlock.";
    assert_eq!(miscitation("rfc8166/3.3.1/x", q, "MUST NOT"), None);
    assert!(miscitation("rfc8166/3.3.1/x", q, "MUST").is_some(), "MUST is not MUST NOT");
    assert!(miscitation("rfc8166/4.5/x", q, "MUST NOT").is_some(), "wrong section");
    assert!(miscitation("rfc8166/3.3.1/x", &q.replace("granted", "Granted"), "MUST NOT").is_some());
    let cross = format!("Error handling works the same way ... (RFC 8166 3.3.1) {q}");
    assert_eq!(miscitation("v2-01/4.2.3/x", &cross, "MUST NOT"), None);
    let lower = "A responder therefore must not employ remote invalidation";
    assert!(miscitation("rfc8797/3.2/x", lower, "MUST NOT").is_some(), "lowercase under RFC 8174");
    let draft = "The xid field of this message must match that in the initial transmission.";
    assert_eq!(miscitation("rtrext-03/9.4/x", draft, "MUST"), None, "lowercase under RFC 2119 alone");
}

#[test]
fn every_check_quote_is_in_the_section_its_id_names() {
    let mut quotes: Vec<(&str, &str, &str)> =
        catalogue::all().iter().map(|c| (c.info.id, c.info.requirement, c.info.key_word.as_str())).collect();
    quotes.extend(catalogue::client::all().map(|c| (c.info.id, c.info.requirement, c.info.key_word.as_str())));
    let mut found = BTreeMap::new();
    for (id, quote, kw) in quotes {
        if let Some(why) = miscitation(id, quote, kw) {
            found.insert(id, why);
        }
    }
    let unlisted: Vec<String> =
        found.iter().filter(|(id, _)| !KNOWN_MISCITED.contains(id)).map(|(id, why)| format!("{id}: {why}")).collect();
    let fixed: Vec<&&str> = KNOWN_MISCITED.iter().filter(|id| !found.contains_key(**id)).collect();
    assert!(unlisted.is_empty(), "mis-cited checks:\n{}", unlisted.join("\n"));
    assert!(fixed.is_empty(), "no longer mis-cited (remove from KNOWN_MISCITED): {fixed:?}");
}

/// The fix proposed to the catalogue's owner for each mis-cited check (and for checks whose
/// quote is verbatim but binds another party than the one the check judges, or holds a
/// statement the check's pass condition does not judge): the new ID
/// (the same when only the quote changes), key word and quote. Proven here, so the owner
/// can apply them as they are.
struct Fix {
    check: &'static str,
    id: &'static str,
    key_word: &'static str,
    quote: &'static str,
}

const PROPOSED_FIXES: &[Fix] = &[];

#[test]
fn the_proposed_fixes_are_well_cited() {
    let mut ids: Vec<&str> = server_ids();
    ids.extend(client_ids());
    for f in PROPOSED_FIXES {
        assert!(ids.contains(&f.check), "{}: no such check", f.check);
        assert_eq!(miscitation(f.id, f.quote, f.key_word), None, "{}", f.id);
        assert!(f.id == f.check || !ids.contains(&f.id), "{}: the new ID is taken", f.id);
        assert_eq!(f.id.rsplit('/').next(), f.check.rsplit('/').next(), "{}: the name changed", f.id);
    }
    for known in KNOWN_MISCITED {
        assert!(PROPOSED_FIXES.iter().any(|f| f.check == *known), "{known}: no fix proposed");
    }
}
