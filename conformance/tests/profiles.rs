//! Every shipped profile says how each of its reasons is known (issue 21, section 4): every
//! divergence and finding carries `evidence`; a source line cited (`file.c:123`) is only
//! ever of a version the profile measured; a reason that calls itself inferred is not claimed
//! as read or traced, and an entry claimed as read or traced names the functions and files it
//! rests on. Only what can be checked mechanically is checked here; whether a reason is true is
//! for the reviewer, with the Debian source of the measured version at hand. The docs are held
//! to the first rule too: they cite sources by function and file, never by line number.

use std::path::{Path, PathBuf};

use rpcrdma_conformance::expectations::{Evidence, Expectations, How};

fn profiles() -> Vec<(PathBuf, Expectations)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles");
    let mut out: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let e = Expectations::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, e)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 7, "expected the shipped profiles in {}, found {}", dir.display(), out.len());
    out
}

/// Each entry of a profile: its name (`divergence ID` / `finding KIND`), reason and evidence.
fn entries(p: &Expectations) -> Vec<(String, &str, Option<&Evidence>)> {
    let d = p.divergences.iter().map(|d| (format!("divergence {}", d.id), d.reason.as_str(), d.evidence.as_ref()));
    let f = p.findings.iter().map(|f| (format!("finding {}", f.kind), f.reason.as_str(), f.evidence.as_ref()));
    d.chain(f).collect()
}

/// The byte ranges of the source lines a text cites: `svc_rdma_sendto.c:959`,
/// `rpc_rdma.c:1440-1443`, `nfs4xdr.c:4399/4408`, and the bare `:1564` that continues the
/// last file cited. A bare `:N` with no file cited before it is returned as an error.
fn line_cites(text: &str) -> Result<Vec<(usize, usize)>, String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut file_seen = false;
    let mut i = 0;
    while i < b.len() {
        if b[i] == b':' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            // The name before the colon: `name.c` / `name.h` (a path), or nothing (a bare `:N`).
            let mut s = i;
            while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b"_/.-".contains(&b[s - 1])) {
                s -= 1;
            }
            let name = &text[s..i];
            let is_file = name.ends_with(".c") || name.ends_with(".h");
            let bare = name.is_empty() && (s == 0 || b" (,`".contains(&b[s - 1]));
            let mut e = i + 1;
            while e < b.len()
                && (b[e].is_ascii_digit() || (b"-/".contains(&b[e]) && b.get(e + 1).is_some_and(u8::is_ascii_digit)))
            {
                e += 1;
            }
            if is_file {
                file_seen = true;
                out.push((s, e));
            } else if bare {
                if !file_seen {
                    return Err(format!("a line number {:?} with no file cited before it", &text[i..e]));
                }
                out.push((i, e));
            }
            i = e;
        } else {
            i += 1;
        }
    }
    Ok(out)
}

/// The versions a text names, with their byte offsets: a version-shaped word (`6.12.117`,
/// `7.3-rc7`, `6.1.192-2`, `v6.3`) right after `in`, `on`, `Linux`, `kernel`, `ntirpc`,
/// `nfs-ganesha` or `ganesha`.
fn version_mentions(text: &str) -> Vec<(usize, &str)> {
    const BEFORE: [&str; 7] = ["in", "on", "linux", "kernel", "ntirpc", "nfs-ganesha", "ganesha"];
    let mut out = Vec::new();
    let mut prev: Option<&str> = None;
    for (at, word) in words(text) {
        let w = word.trim_start_matches(['(', '`']);
        let lead = word.len() - w.len();
        let w = w.strip_prefix('v').unwrap_or(w);
        let w = w.trim_end_matches(['.', ',', ';', ':', ')', '`', '\'', '"']);
        let versionish = w.starts_with(|c: char| c.is_ascii_digit())
            && w.contains('.')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || ".-~+".contains(c));
        if versionish && prev.is_some_and(|p| BEFORE.contains(&p.trim_start_matches('(').to_lowercase().as_str())) {
            let start = at + lead + usize::from(word[lead..].starts_with('v'));
            out.push((start, w));
        }
        prev = Some(word);
    }
    out
}

fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split_whitespace().map(move |w| (w.as_ptr() as usize - text.as_ptr() as usize, w))
}

/// Whether `v` names one of the measured versions: the whole Debian version (`6.12.117-1`)
/// or its upstream part (`6.12.117`); a measured entry of several words
/// (`nfs-ganesha 6.5-5 ntirpc 6.3-2`) names each of its versions.
fn is_measured(v: &str, measured: &[String]) -> bool {
    measured
        .iter()
        .flat_map(|m| m.split_whitespace())
        .any(|m| m.starts_with(|c: char| c.is_ascii_digit()) && (m == v || m.split('-').next() == Some(v)))
}

/// What is wrong with a text's line citations: a version named within 60 bytes of a cited
/// line that the profile did not measure (a line number is only meaningful in the exact
/// source that ran), or a bare line number with no file.
fn line_cite_problems(text: &str, measured: &[String]) -> Vec<String> {
    let cites = match line_cites(text) {
        Ok(c) => c,
        Err(e) => return vec![e],
    };
    let near = |at: usize| cites.iter().any(|&(s, e)| at + 60 >= s && at <= e + 60);
    version_mentions(text)
        .into_iter()
        .filter(|&(at, v)| near(at) && !is_measured(v, measured))
        .map(|(at, v)| {
            let from = text[..at].char_indices().rev().nth(40).map_or(0, |(i, _)| i);
            format!(
                "cites a line of {v}, which \"measured\" does not list ({}): …{}",
                measured.join(", "),
                &text[from..at + v.len()]
            )
        })
        .collect()
}

#[test]
fn every_entry_has_evidence_of_a_measured_version() {
    let mut missing = Vec::new();
    for (path, p) in profiles() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if p.measured.is_empty() {
            missing.push(format!("{name}: no \"measured\" versions"));
        }
        for (entry, _, ev) in entries(&p) {
            match ev {
                None => missing.push(format!("{name}: {entry}: no \"evidence\"")),
                // The parser refuses any other version; checked again so this test fails alone.
                Some(ev) if !p.has_measured(&ev.version) => {
                    missing.push(format!("{name}: {entry}: evidence of unmeasured {}", ev.version))
                }
                Some(_) => {}
            }
        }
    }
    assert!(missing.is_empty(), "{} entries without evidence:\n{}", missing.len(), missing.join("\n"));
}

#[test]
fn sources_are_cited_by_function_and_quoted_lines_are_of_a_measured_version() {
    let mut bad = Vec::new();
    for (path, p) in profiles() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for (entry, reason, ev) in entries(&p) {
            // A reason and its source name functions and files: a point release moves lines.
            let mut texts = vec![("reason", reason)];
            if let Some(ev) = ev {
                texts.push(("evidence.source", ev.source.as_str()));
            }
            for (field, text) in texts {
                if line_cites(text).map_or(true, |c| !c.is_empty()) {
                    bad.push(format!("{name}: {entry}: {field} cites source by line number, not by function"));
                }
            }
            // What a run printed, quoted, keeps its own line numbers: of a measured version.
            if let Some(ev) = ev {
                for problem in line_cite_problems(&ev.observed, &p.measured) {
                    bad.push(format!("{name}: {entry}: evidence.observed {problem}"));
                }
            }
        }
        // A finding's kind is its identity across point releases: no line numbers in it.
        for f in &p.findings {
            if !line_cites(&f.kind).unwrap_or_default().is_empty() || f.kind.contains(".h:") || f.kind.contains(".c:") {
                bad.push(format!("{name}: finding {}: a line number in the finding's kind", f.kind));
            }
        }
    }
    assert!(bad.is_empty(), "{} problems:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn how_agrees_with_the_reason() {
    let mut bad = Vec::new();
    for (path, p) in profiles() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        for (entry, reason, ev) in entries(&p) {
            let Some(ev) = ev else { continue };
            let says_inferred = reason.to_lowercase().contains("inferred");
            match ev.how {
                How::Read | How::Traced if says_inferred => bad.push(format!(
                    "{name}: {entry}: the reason says \"inferred\" but the evidence claims {}",
                    ev.how.name()
                )),
                How::Inferred if !says_inferred => {
                    bad.push(format!("{name}: {entry}: inferred, but the reason does not say so"))
                }
                _ => {}
            }
            // Read or traced: in some file, through some function.
            let names_function = ev.source.contains("()");
            let names_file = ev.source.split(|c: char| c.is_whitespace() || "(),;`".contains(c)).any(|w| {
                let w = w.trim_end_matches(['.', ':']);
                w.len() > 2 && (w.ends_with(".c") || w.ends_with(".h") || w.ends_with(".rs"))
            });
            if matches!(ev.how, How::Read | How::Traced) && !(names_function && names_file) {
                bad.push(format!(
                    "{name}: {entry}: {} but evidence.source names no function() and file: {:?}",
                    ev.how.name(),
                    ev.source
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{} problems:\n{}", bad.len(), bad.join("\n"));
}

/// The checks above can fail: each rule refuses a text that breaks it.
#[test]
fn the_rules_refuse_what_they_should() {
    let m = ["6.12.117-1".to_string()];
    // Lines of the measured version, in either spelling, pass.
    assert!(line_cite_problems("rpcrdma_reply_handler() (rpc_rdma.c:1519 in 6.12.117), :1564", &m).is_empty());
    assert!(line_cite_problems("svc.h:520 in 6.12.117-1", &m).is_empty());
    // A point release or a release candidate the profile did not measure is refused.
    assert_eq!(line_cite_problems("the WARN_ON (include/linux/sunrpc/svc.h:523 in 6.12.118)", &m).len(), 1);
    let rc = ["7.3.4-1~bpo13+1".to_string()];
    assert_eq!(line_cite_problems("(rpc_rdma.c:1451 in 7.3 (read in 7.3-rc7; the same code))", &rc).len(), 2);
    assert!(line_cite_problems("(rpc_rdma.c:1470 in 7.3.4)", &rc).is_empty());
    // A version far from any cited line is not about a line.
    let far = format!("rpc_rdma.c:1519 in 6.12.117. {} Linux 6.1 reads into kvecs.", "x".repeat(80));
    assert!(line_cite_problems(&far, &m).is_empty());
    // A bare line number needs a file before it.
    assert_eq!(line_cite_problems("goes to out_badheader (:1440)", &m).len(), 1);
    // Section numbers and sizes are not versions.
    assert!(version_mentions("RFC 8166 4.3.2.3 in 2 ms").is_empty());
    // A package line of several versions: each is measured.
    let g = ["nfs-ganesha 6.5-5 ntirpc 6.3-2".to_string()];
    assert!(line_cite_problems("src/xdr_rdma.c:791 in ntirpc 6.3", &g).is_empty());
    assert_eq!(line_cite_problems("src/xdr_rdma.c:791 in ntirpc 6.2", &g).len(), 1);
    // Cites found, with their continuations.
    assert_eq!(line_cites("a.c:1-2, :3/4 and b.h:5").unwrap().len(), 3);
    assert!(line_cites("RFC 8166 4.5: a message").unwrap().is_empty());
}

/// The docs (README.md, BENCHMARKS.md, docs/*.md, docs/findings/*.md), each with its text.
fn docs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut paths = vec![root.join("README.md"), root.join("BENCHMARKS.md")];
    for dir in ["docs", "docs/findings"] {
        let dir = root.join(dir);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        paths.extend(
            entries.map(|e| e.expect("directory entry").path()).filter(|p| p.extension().is_some_and(|x| x == "md")),
        );
    }
    paths.sort();
    assert!(paths.len() >= 10, "expected the docs, found {} files", paths.len());
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let name = p.strip_prefix(&root).unwrap_or(&p).display().to_string();
            (name, text)
        })
        .collect()
}

/// What a kernel prints before the file and line of a report of its own: a quote, kept as
/// printed (`WARNING at net/sunrpc/svc.c:1570`, `kernel BUG at lib/sg_pool.c:117!`).
const KERNEL_REPORT_PREFIXES: [&str; 4] = ["WARNING at ", "WARNING: ", "BUG at ", "WARN at "];

/// The source lines a doc cites, each with the doc line it is on: `file.c:123`, `file.h:1-2`,
/// `` `file.c` 497-499 ``, `line 580`, `lines 1184-1206`. Fenced code blocks and a kernel's
/// own report line quoted in prose ([`KERNEL_REPORT_PREFIXES`]) are quotes, not cites.
fn doc_line_cites(text: &str) -> Vec<(usize, String)> {
    // Code blocks blanked, offsets kept.
    let mut prose = String::with_capacity(text.len());
    let mut fenced = false;
    for line in text.split_inclusive('\n') {
        let fence = line.trim_start().starts_with("```");
        if fenced || fence {
            prose.extend(
                line.chars().flat_map(|c| std::iter::repeat_n(if c == '\n' { '\n' } else { ' ' }, c.len_utf8())),
            );
        } else {
            prose.push_str(line);
        }
        fenced ^= fence;
    }
    let b = prose.as_bytes();
    let number_end = |mut e: usize| {
        while e < b.len()
            && (b[e].is_ascii_digit() || (b"-/".contains(&b[e]) && b.get(e + 1).is_some_and(u8::is_ascii_digit)))
        {
            e += 1;
        }
        e
    };
    let mut out: Vec<(usize, usize)> = Vec::new();
    // `file.c:123`, line by line so that a bare `:N` continues a file on its own line.
    let mut at = 0;
    for line in prose.split_inclusive('\n') {
        match line_cites(line) {
            Ok(c) => out.extend(c.into_iter().map(|(s, e)| (at + s, at + e))),
            Err(_) => out.push((at, at + line.trim_end().len())),
        }
        at += line.len();
    }
    out.retain(|&(s, _)| !KERNEL_REPORT_PREFIXES.iter().any(|p| prose[..s].trim_end_matches('`').ends_with(p)));
    let lower = prose.to_ascii_lowercase();
    let lb = lower.as_bytes();
    for i in 0..b.len() {
        // The word ending at `i`: a source file (`file.c 123`) or `line`/`lines` (`line 123`).
        let file = (b[i] == b'c' || b[i] == b'h') && i >= 2 && b[i - 1] == b'.' && b[i - 2].is_ascii_alphanumeric();
        let word = [&b"line"[..], b"lines"].into_iter().find(|w| lb[..=i].ends_with(w));
        let mut s = match word {
            Some(w) => i + 1 - w.len(),
            None if file => i,
            None => continue,
        };
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || (file && b"_/.-".contains(&b[s - 1]))) {
            s -= 1;
        }
        if word.is_some_and(|w| i + 1 - s != w.len()) {
            continue; // `pipeline 3`
        }
        let mut n = i + 1;
        if b.get(n) == Some(&b'`') {
            n += 1;
        }
        if !b.get(n).is_some_and(u8::is_ascii_whitespace) || !b.get(n + 1).is_some_and(u8::is_ascii_digit) {
            continue;
        }
        let e = number_end(n + 1);
        // `file.c 6.12.117` names a version, not a line.
        if !(b.get(e) == Some(&b'.') && b.get(e + 1).is_some_and(u8::is_ascii_digit)) {
            out.push((s, e));
        }
    }
    out.sort();
    out.dedup();
    out.into_iter()
        .map(|(s, e)| {
            let line = prose[..s].matches('\n').count() + 1;
            (line, text[s..e].to_string())
        })
        .collect()
}

#[test]
fn docs_cite_sources_by_function_not_by_line_number() {
    let mut bad = Vec::new();
    for (name, text) in docs() {
        for (line, cite) in doc_line_cites(&text) {
            bad.push(format!("{name}:{line}: cites a source line ({cite:?}), not a function and file"));
        }
    }
    assert!(bad.is_empty(), "{} source lines cited by number:\n{}", bad.len(), bad.join("\n"));
}

/// The docs check can fail: it finds each spelling of a line cite, and only those.
#[test]
fn the_docs_check_refuses_line_numbers() {
    let cites = |t: &str| doc_line_cites(t).into_iter().map(|(_, c)| c).collect::<Vec<_>>();
    assert_eq!(cites("(`src/FSAL/localfs.c:950`), and\n(`nfs_worker_thread.c:1297-1300`)").len(), 2);
    assert_eq!(cites("(`wsutil/wmem/wmem_tree.c` 497-499)"), ["wsutil/wmem/wmem_tree.c` 497-499"]);
    assert_eq!(cites("(`packet-nfs.c` 6515) as the reply has write chunks (line 1172)").len(), 2);
    assert_eq!(cites("(lines 218 and\n1206) and Line 7"), ["lines 218", "Line 7"]);
    assert_eq!(cites("of `rpc_rdma.c:1440`, then :1564").len(), 2);
    // Quotes, versions and prose are not cites.
    assert!(cites("```text\nkernel BUG at lib/sg_pool.c:117!\n```\n").is_empty());
    assert_eq!(cites("```\n→ …\n```\n`svc.c` 12"), ["svc.c` 12"]);
    assert!(cites("(`WARNING at net/sunrpc/xprtrdma/svc_rdma_rw.c:351 x`), the same WARN at `svc.h:539`").is_empty());
    assert!(cites("`rpc_rdma.c` 6.12.117, the 40 lines after it, a pipeline 3, at 09:30").is_empty());
    assert!(cites("`dissect_rpcrdma()` (epan/dissectors/packet-rpcrdma.c)").is_empty());
}
