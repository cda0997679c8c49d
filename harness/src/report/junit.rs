//! The JUnit XML report: one testsuite, one testcase per check; failures carry the
//! requirement, Expected and Actual; unsupported and skipped checks are `<skipped/>`.

use std::fmt::Write;

use rpcrdma_conformance::expectations::Status;

use super::Run;

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

pub fn render(run: &Run<'_>) -> String {
    let t = run.totals();
    let total_time: f64 = run.results.iter().map(|r| r.duration.as_secs_f64()).sum();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        s,
        "<testsuites name=\"rpcrdma-harness\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{total_time:.3}\">",
        run.results.len(),
        t.failed,
        t.skipped
    );
    let _ = writeln!(
        s,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" time=\"{total_time:.3}\">",
        escape(&run.peer),
        run.results.len(),
        t.failed,
        t.skipped
    );
    for (r, j) in run.results.iter().zip(run.judged) {
        let (section, name) = r.check.id.rsplit_once('/').unwrap_or(("", r.check.id));
        let _ = write!(
            s,
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\"",
            escape(&section.replace('/', ".")),
            escape(name),
            r.duration.as_secs_f64()
        );
        match j.status {
            Status::Fail | Status::UnexpectedPass => {
                let msg = format!("{}: {}", j.status.name(), r.actual);
                let body = format!(
                    "{} [{}]\nExpected: {}\nActual: {}\n{}",
                    r.check.requirement,
                    r.check.key_word.as_str(),
                    r.expected,
                    r.actual,
                    j.reason.as_deref().unwrap_or("")
                );
                let _ = writeln!(
                    s,
                    ">\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>",
                    escape(&msg),
                    j.status.name(),
                    escape(&body)
                );
            }
            Status::Unsupported | Status::Skipped => {
                let _ =
                    writeln!(s, ">\n      <skipped message=\"{}\"/>\n    </testcase>", escape(&r.actual.to_string()));
            }
            _ => {
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

    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;\\u0001");
    }
}
