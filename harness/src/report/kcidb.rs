//! KCIDB I/O JSON (KernelCI's common results database, schema v5.3 of the `kcidb-io` package)
//! from our JSON reports: `run --kcidb FILE`, `serve --kcidb FILE`, and `report kcidb
//! REPORT.json... -o FILE` for reports already written.
//!
//! One checkout and one build per peer version (the kernel's version as the report's
//! `peer_version` names it; KCIDB's checkout is source code, so ours is "the peer's source at
//! that version", and its build "the packages that ran"), one test per check. Statuses:
//! `pass` and `pass-lax` are PASS (a SHOULD/MAY deviation accepted without `--strict`, said
//! in the comment), `fail` is FAIL, an `expected-divergence` is FAIL too (the tested code does
//! break the requirement; KCIDB has no "known failure" status) with an incident linking it to
//! an issue (the profile's entry, `present: true`), and an `unexpected-pass` is PASS (the code
//! meets the requirement now) with an incident saying that issue is absent (`present: false`).
//! `unsupported` and `inconclusive` are SKIP (nothing was judged), with the reason in the
//! comment; `skipped` is SKIP, or MISS when the run was interrupted before it (the harness did
//! not run it); `error` (a harness defect) is ERROR. Our own status is in each test's `misc`.

use serde_json::{json, Map, Value};

/// The KCIDB I/O schema version written.
pub const VERSION: (u32, u32) = (5, 3);
/// The origin used when none is given (KCIDB origins are assigned per submitter).
pub const DEFAULT_ORIGIN: &str = "rpcrdma";
/// KCIDB's longest log excerpt.
const MAX_EXCERPT: usize = 16384;

/// Parses an origin as KCIDB requires it (`^[a-z0-9_]+$`).
pub fn origin(s: &str) -> Result<String, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
        Ok(s.to_string())
    } else {
        Err(format!("{s:?} is not a KCIDB origin (lower-case letters, digits and _)"))
    }
}

/// KCIDB forbids NUL in its strings.
fn clean(s: &str) -> String {
    s.replace('\0', "\\0")
}

/// The first `max` bytes of `s` at a character boundary.
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max - 3;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

/// Seconds since the epoch as RFC 3339 (`2026-11-27T07:13:57+00:00`).
fn rfc3339(secs: u64) -> String {
    let s = crate::clock::utc(secs);
    format!("{}T{}+00:00", &s[..10], &s[11..19])
}

/// A check ID as a KCIDB test path: dot-separated names of `[a-zA-Z0-9_-]`, so the spec's
/// section numbers become levels of the tree (`rfc8166/4.5.2/huge-segment-count` ->
/// `rpcrdma.rfc8166.4.5.2.huge-segment-count`); the exact ID is in `misc.check_id`.
fn path(id: &str) -> String {
    let mut p = String::from("rpcrdma");
    for part in id.split(['/', '.']) {
        p.push('.');
        p.extend(part.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }));
    }
    p
}

/// KCIDB status, and a comment saying what ours was when they differ in meaning.
fn status(check: &Value, interrupted: bool) -> (&'static str, Option<String>) {
    let actual = check["actual"].as_str().unwrap_or("");
    match check["status"].as_str().unwrap_or("") {
        "pass" => ("PASS", None),
        "pass-lax" => (
            "PASS",
            Some(format!(
                "pass-lax: a {} deviation, accepted without --strict: {actual}",
                check["key_word"].as_str().unwrap_or("SHOULD")
            )),
        ),
        "fail" => ("FAIL", None),
        "expected-divergence" => (
            "FAIL",
            Some(format!(
                "expected divergence, listed in the profile: {}",
                check["divergence_reason"].as_str().unwrap_or("")
            )),
        ),
        "unexpected-pass" => (
            "PASS",
            Some(format!(
                "passed, but the profile lists a divergence (stale profile): {}",
                check["divergence_reason"].as_str().unwrap_or("")
            )),
        ),
        "unsupported" => ("SKIP", Some(format!("unsupported by the peer: {actual}"))),
        "inconclusive" => ("SKIP", Some(format!("inconclusive, the check's precondition did not happen: {actual}"))),
        "skipped" => match check["not_run_after"].as_str() {
            Some(after) => ("SKIP", Some(format!("not run: the peer went down after {after}"))),
            None if interrupted => ("MISS", Some("not run: the run was interrupted".into())),
            None => ("SKIP", Some("not run".into())),
        },
        "error" => ("ERROR", Some(format!("the check broke (a harness defect, the peer not judged): {actual}"))),
        other => ("ERROR", Some(format!("unknown status {other:?} in the report"))),
    }
}

/// What the CI shows of a check: requirement, expected, actual, what happened to the peer,
/// the conversation.
fn excerpt(check: &Value) -> String {
    let mut s = format!(
        "{} {}: {}\nexpected: {}\nactual: {}\n",
        check["id"].as_str().unwrap_or(""),
        check["key_word"].as_str().unwrap_or(""),
        check["requirement"].as_str().unwrap_or(""),
        check["expected"].as_str().unwrap_or(""),
        check["actual"].as_str().unwrap_or("")
    );
    if let Some(e) = check["peer"]["event"].as_str() {
        s += &format!("the peer {e} after this check: {}\n", check["peer"]["detail"].as_str().unwrap_or(""));
    }
    for line in check["kernel_log"].as_array().into_iter().chain(check["peer"]["kernel_log"].as_array()).flatten() {
        s += &format!("kernel: {}\n", line.as_str().unwrap_or(""));
    }
    for t in check["transcript"].as_array().into_iter().flatten() {
        s += &format!("{} {}\n", t["direction"].as_str().unwrap_or(""), t["summary"].as_str().unwrap_or(""));
    }
    cut(&clean(&s), MAX_EXCERPT)
}

/// KCIDB I/O JSON of the reports.
pub fn convert(reports: &[Value], origin: &str) -> Value {
    let (mut checkouts, mut builds, mut tests, mut issues, mut incidents) = (vec![], vec![], vec![], vec![], vec![]);
    let mut seen_builds = std::collections::BTreeSet::new();
    for r in reports {
        let version = r["peer_version"].as_str().filter(|v| !v.is_empty()).map(clean);
        let key =
            version.clone().unwrap_or_else(|| format!("unversioned-{}", clean(r["peer"].as_str().unwrap_or("peer"))));
        let checkout_id = format!("{origin}:{key}");
        let build_id = format!("{origin}:{key}");
        if seen_builds.insert(key.clone()) {
            let mut checkout = json!({
                "id": checkout_id,
                "origin": origin,
                "comment": match &version {
                    Some(v) => format!("the peer's source at version {v}, as the peer's packages name it"),
                    None => "the peer's version was not given (--peer-version)".into(),
                },
                "valid": true,
            });
            if let Some(v) = &version {
                checkout["misc"] = json!({ "peer_version": v });
            }
            checkouts.push(checkout);
            builds.push(json!({
                "id": build_id,
                "checkout_id": checkout_id,
                "origin": origin,
                "comment": format!("the packages that ran, version {key} (not built by rpcrdma-harness)"),
            }));
        }
        let command = r["command"].as_str().unwrap_or("run");
        let started = r["started_unix"].as_u64().unwrap_or(0);
        let interrupted = r["interrupted"] == true;
        let profile = r["expectations"].as_str().map(clean);
        let run_id = format!("{command}-{started}-{}", clean(&key));
        for c in r["checks"].as_array().into_iter().flatten() {
            let id = c["id"].as_str().unwrap_or("");
            let test_id = format!("{origin}:{run_id}:{id}");
            let (st, note) = status(c, interrupted);
            let mut misc = Map::new();
            for (k, v) in [
                ("check_id", json!(id)),
                ("status", c["status"].clone()),
                ("outcome", c["outcome"].clone()),
                ("key_word", c["key_word"].clone()),
                ("requirements", c["requirements"].clone()),
                ("command", json!(command)),
                ("harness_version", r["tool"]["version"].clone()),
                ("harness_revision", r["tool"]["revision"].clone()),
            ] {
                if !v.is_null() {
                    misc.insert(k.into(), v);
                }
            }
            if let Some(p) = &profile {
                misc.insert("profile".into(), json!(p));
            }
            let mut test = json!({
                "id": test_id,
                "build_id": build_id,
                "origin": origin,
                "path": path(id),
                "status": st,
                "start_time": rfc3339(started),
                "duration": c["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
                "environment": {
                    "comment": clean(&format!(
                        "rpcrdma-harness {command} against {} over {}",
                        r["peer"].as_str().unwrap_or("?"),
                        r["transport"].as_str().unwrap_or("?")
                    )),
                },
                "log_excerpt": excerpt(c),
                "misc": misc,
            });
            if let Some(n) = note {
                test["comment"] = json!(clean(&format!("{id}: {n}")));
            } else {
                test["comment"] = json!(clean(id));
            }
            // A profile entry is a known issue of the peer: present when it diverged as
            // listed, absent when the check now passes.
            let present = match c["status"].as_str() {
                Some("expected-divergence") => Some(true),
                Some("unexpected-pass") => Some(false),
                _ => None,
            };
            if let (Some(present), Some(p)) = (present, &profile) {
                let issue_id = format!("{origin}:{p}:{id}");
                if !issues.iter().any(|i: &Value| i["id"] == issue_id) {
                    issues.push(json!({
                        "id": issue_id,
                        "version": 0,
                        "origin": origin,
                        "culprit": { "code": true, "tool": false, "harness": false },
                        "comment": clean(&format!("{id}: listed in the expectation profile {p}")),
                        "misc": { "profile": p, "check_id": id },
                    }));
                }
                incidents.push(json!({
                    "id": format!("{test_id}:{p}"),
                    "origin": origin,
                    "issue_id": issue_id,
                    "issue_version": 0,
                    "test_id": test_id,
                    "present": present,
                    "comment": clean(c["divergence_reason"].as_str().unwrap_or("")),
                }));
            }
            tests.push(test);
        }
    }
    json!({
        "version": { "major": VERSION.0, "minor": VERSION.1 },
        "checkouts": checkouts,
        "builds": builds,
        "tests": tests,
        "issues": issues,
        "incidents": incidents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_ids_become_kcidb_paths() {
        assert_eq!(path("rfc8166/4.5.2/huge-segment-count"), "rpcrdma.rfc8166.4.5.2.huge-segment-count");
        assert_eq!(path("v2-01/4.2.3/bad header"), "rpcrdma.v2-01.4.2.3.bad_header");
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00+00:00");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20+00:00");
    }

    #[test]
    fn origins_are_checked() {
        assert!(origin("rpcrdma").is_ok());
        assert!(origin("my_ci2").is_ok());
        assert!(origin("My-CI").is_err());
        assert!(origin("").is_err());
    }

    #[test]
    fn excerpts_are_bounded() {
        let long = "é".repeat(20000);
        let c = json!({"id": "a/1/x", "actual": long});
        assert!(excerpt(&c).len() <= MAX_EXCERPT);
    }
}
