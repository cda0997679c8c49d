//! The JUnit XML report: one testsuite, one testcase per check; failures carry the
//! requirement, Expected and Actual; unsupported and skipped checks are `<skipped/>`.

use std::fmt::Write;

use rpcrdma_conformance::expectations::Status;

use super::Run;

/// A run that ended before judging anything: one testcase in error, saying why and with
/// which exit status (a CI test tab then shows the reason, not an empty suite).
fn failure(run: &Run<'_>, code: i32, message: &str) -> String {
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(s, "<testsuites name=\"rpcrdma-harness\" tests=\"1\" failures=\"0\" errors=\"1\" time=\"0.000\">");
    let _ = writeln!(
        s,
        "  <testsuite name=\"rpcrdma-harness {}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\">",
        escape(run.meta.command)
    );
    let _ = writeln!(
        s,
        "    <testcase classname=\"rpcrdma-harness\" name=\"{}\" time=\"0.000\">\n      <error message=\"{}\" type=\"exit-status-{code}\">{}</error>\n    </testcase>",
        escape(run.meta.command),
        escape(message),
        escape(&format!("the run ended before judging anything (exit status {code}): {message}"))
    );
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

/// Escapes text for XML attributes and content.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            // XML 1.0 forbids most control characters.
            c if (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t') => {
                let _ = write!(o, "\\u{:04x}", c as u32);
            }
            c => o.push(c),
        }
    }
    o
}

/// Seconds with three decimals, never negative (an empty sum of `f64` is -0.0).
fn seconds(s: f64) -> String {
    format!("{:.3}", s.max(0.0) + 0.0)
}

/// The report. Only attributes and elements the common JUnit schemas (Jenkins xunit, Ant)
/// accept: `testsuites` carries name, tests, failures, errors, time; the run's metadata are
/// `properties` of the `testsuite`; a pass-lax check or an expected divergence carries its
/// status and reason in `system-out`, so it does not read as a plain pass.
pub fn render(run: &Run<'_>) -> String {
    if let Some((code, message)) = &run.meta.failure {
        return failure(run, *code, message);
    }
    let mut t = run.totals();
    // An unsupported check is a <skipped/> testcase too.
    t.skipped += t.unsupported;
    // An inconclusive check is a <skipped/> testcase, or under --strict a <failure/>.
    if run.strict {
        t.failed += t.inconclusive;
    } else {
        t.skipped += t.inconclusive;
    }
    let total_time = seconds(run.checks.iter().map(|c| c.result.duration.as_secs_f64()).sum());
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"rpcrdma-harness\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{total_time}\">",
        run.checks.len(),
        t.failed,
        t.errors,
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{total_time}\">",
        escape(&run.peer),
        run.checks.len(),
        t.failed,
        t.errors,
        t.skipped
    );
    s.push_str("    <properties>\n");
    let mut props = run.meta.properties();
    props.push(("transport", run.transport.clone()));
    props.push(("strict", run.strict.to_string()));
    props.push(("expectations", run.expectations.clone().unwrap_or_default()));
    props.push(("interrupted", run.interrupted.to_string()));
    for (name, value) in props {
        let _ = writeln!(s, "      <property name=\"{}\" value=\"{}\"/>", escape(name), escape(&value));
    }
    s.push_str("    </properties>\n");
    for super::JudgedResult { result: r, judged: j } in run.checks {
        // The whole check ID is the name, as people search for it; the classname groups the
        // checks by spec section (`rfc8166.4.5`).
        let section = r.check.id.rsplit_once('/').map_or("", |(section, _)| section);
        let _ = write!(
            s,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{}\"",
            escape(&section.replace('/', ".")),
            escape(r.check.id),
            seconds(r.duration.as_secs_f64())
        );
        // The conversation, decoded and in hex, for the CI's test tab.
        let out = match super::text::transcript(r, "") {
            t if t.is_empty() => String::new(),
            t => format!("\n      <system-out>{}</system-out>", escape(&t)),
        };
        match j.status {
            Status::Fail | Status::UnexpectedPass => {
                let mut msg = format!("{}: {}", j.status.name(), r.actual);
                if let Some(d) = &r.peer.down {
                    msg += &format!("; then the peer {}: {}", d.kind.name(), d.detail);
                }
                let body = format!(
                    "{} [{}]\nExpected: {}\nActual: {}\n{}\n{}",
                    r.check.requirement(),
                    r.check.key_word().as_str(),
                    r.expected,
                    r.actual,
                    j.reason.as_deref().unwrap_or(""),
                    super::text::peer_down(r, "")
                );
                let _ = writeln!(
                    s,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>{out}\n    </testcase>",
                    escape(&msg),
                    j.status.name(),
                    escape(&body)
                );
            }
            Status::Error => {
                let _ = writeln!(
                    s,
                    ">\n      <error message=\"{}\" type=\"harness-error\">{}</error>{out}\n    </testcase>",
                    escape(&r.actual.to_string()),
                    escape(&format!("Expected: {}\nActual: {}\n", r.expected, r.actual))
                );
            }
            // Not judged: skipped, with why; under --strict it fails the run, so it fails here.
            Status::Inconclusive if run.strict => {
                let msg = format!("inconclusive (--strict): {}", r.actual);
                let body =
                    format!("{}\nExpected: {}\nActual: {}\n", r.check.precondition.unwrap_or(""), r.expected, r.actual);
                let _ = writeln!(
                    s,
                    ">\n      <failure message=\"{}\" type=\"inconclusive\">{}</failure>{out}\n    </testcase>",
                    escape(&msg),
                    escape(&body)
                );
            }
            Status::Inconclusive => {
                let msg = format!("inconclusive: {}", r.actual);
                let _ = writeln!(s, ">\n      <skipped message=\"{}\"/>\n    </testcase>", escape(&msg));
            }
            Status::Unsupported | Status::Skipped => {
                let why = j.reason.clone().unwrap_or_else(|| r.actual.to_string());
                let _ = writeln!(s, ">\n      <skipped message=\"{}\"/>\n    </testcase>", escape(&why));
            }
            Status::PassLax | Status::ExpectedDivergence => {
                let mut body = format!("status: {}\nActual: {}\n", j.status.name(), r.actual);
                if let Some(reason) = &j.reason {
                    let _ = writeln!(body, "reason: {reason}");
                }
                body.push_str(&super::text::transcript(r, ""));
                let _ = writeln!(s, ">\n      <system-out>{}</system-out>\n    </testcase>", escape(&body));
            }
            Status::Pass => {
                let _ = writeln!(s, "/>");
            }
        }
    }
    s.push_str("  </testsuite>\n</testsuites>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of these judged results, as `run` would report it, with nothing else set.
    fn run_of(checks: &[super::super::JudgedResult], strict: bool) -> Run<'_> {
        Run {
            peer: "p".into(),
            transport: "t".into(),
            strict,
            expectations: None,
            interrupted: false,
            started_unix: 0,
            duration: std::time::Duration::ZERO,
            checks,
            meta: super::super::Metadata::default(),
        }
    }

    #[test]
    fn a_run_without_checks_has_no_negative_time() {
        let run = run_of(&[], false);
        let xml = render(&run);
        assert!(!xml.contains("-0.000"), "{xml}");
        assert!(xml.contains("time=\"0.000\""), "{xml}");
    }

    #[test]
    fn a_broken_check_is_an_error_not_a_failure() {
        use super::super::JudgedResult;
        use rpcrdma_conformance::engine::{CheckInfo, CheckResult, Outcome};
        use rpcrdma_conformance::expectations::judge;
        static INFO: CheckInfo = CheckInfo::stub("rfc8166/4.2.4/null-call");
        let result = CheckResult {
            check: &INFO,
            outcome: Outcome::Error,
            expected: "the scenario to complete".into(),
            actual: "the harness broke, not the peer: the scenario panicked: x".into(),
            connection_survived: None,
            transcript: Vec::new(),
            duration: std::time::Duration::ZERO,
            peer: Default::default(),
        };
        let checks = [JudgedResult { judged: judge(&result, true, None), result }];
        let run = run_of(&checks, true);
        let t = run.totals();
        assert_eq!((t.passed, t.failed, t.skipped, t.errors), (0, 0, 0, 1));
        assert_eq!(super::super::closing_line(t), "0 passed, 0 failed, 0 skipped, 1 harness error");
        let xml = render(&run);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
        assert_eq!(suite.attribute("errors"), Some("1"));
        assert_eq!(suite.attribute("failures"), Some("0"));
        let case = doc.descendants().find(|n| n.has_tag_name("testcase")).unwrap();
        assert!(case.children().any(|n| n.has_tag_name("error")), "{xml}");
        assert!(!case.children().any(|n| n.has_tag_name("failure")), "{xml}");
    }

    #[test]
    fn an_inconclusive_check_is_skipped_with_why_and_a_failure_under_strict() {
        use super::super::JudgedResult;
        use rpcrdma_conformance::engine::{CheckInfo, CheckResult, Outcome};
        use rpcrdma_conformance::expectations::{judge, Status};
        static INFO: CheckInfo = CheckInfo {
            precondition: Some("a call after the grant of 0"),
            ..CheckInfo::stub("rfc8166/3.3.1/requester-zero-grant")
        };
        let result = CheckResult {
            check: &INFO,
            outcome: Outcome::Inconclusive,
            expected: "no call".into(),
            actual: "no call followed".into(),
            connection_survived: None,
            transcript: Vec::new(),
            duration: std::time::Duration::ZERO,
            peer: Default::default(),
        };
        for strict in [false, true] {
            let checks = [JudgedResult { judged: judge(&result, strict, None), result: result.clone() }];
            assert_eq!(checks[0].judged.status, Status::Inconclusive);
            let run = run_of(&checks, strict);
            let t = run.totals();
            assert_eq!((t.passed, t.failed, t.skipped, t.inconclusive), (0, 0, 0, 1));
            assert_eq!(super::super::closing_line(t), "0 passed, 0 failed, 0 skipped, 1 inconclusive");
            assert!(t.nothing_judged());
            let xml = render(&run);
            let doc = roxmltree::Document::parse(&xml).unwrap();
            let case = doc.descendants().find(|n| n.has_tag_name("testcase")).unwrap();
            let want = if strict { "failure" } else { "skipped" };
            let el = case.children().find(|n| n.has_tag_name(want)).unwrap_or_else(|| panic!("{xml}"));
            assert!(el
                .attribute("message")
                .is_some_and(|m| m.contains("inconclusive") && m.contains("no call followed")));
            let suite = doc.descendants().find(|n| n.has_tag_name("testsuite")).unwrap();
            assert_eq!(suite.attribute("failures"), Some(if strict { "1" } else { "0" }), "{xml}");
        }
    }

    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;\\u0001");
    }
}
