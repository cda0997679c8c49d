//! The spec-text tools of the requirement tests: an RFC-style text split into its sections
//! (page footers and running headers dropped), whitespace normalised as the matrix quotes it,
//! and the BCP 14 key words found in it (RFC 2119, RFC 8174). The runtime matrix
//! (`rpcrdma_conformance::requirements`) needs none of them: only the tests that prove its
//! quotes against the vendored texts do.

use rpcrdma_conformance::requirements;

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
fn heading(line: &str) -> Option<&str> {
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
    let s = requirements::spec(spec)?;
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
