//! `rpcrdma-harness matrix`: every check (rows) against every peer configuration (columns),
//! built from any set of JSON reports, as Markdown for terminals and CI logs and as one
//! self-contained HTML page. Drift between configurations is what it is for: rows whose
//! cells differ are marked, and each cell carries what the peer did and, for an expected
//! divergence, the profile's reason.

use rpcrdma_conformance::catalogue::client;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde_json::Value;

use crate::exit::{usage, Ending, HarnessError, Outcome};

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// JSON reports (`run --json`, `serve --json`); `FILE=LABEL` names the column.
    #[arg(value_name = "REPORT.json[=LABEL]", required = true)]
    reports: Vec<String>,
    /// Write the matrix as a self-contained HTML page here.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write the matrix as Markdown here (`-` for standard output, the default when no
    /// output is named).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Exit 1 when any row differs between configurations of the same side (a CI gate on
    /// drift); without it the exit status is 0 whatever the matrix shows.
    #[arg(long)]
    fail_on_drift: bool,
}

/// One cell: a check's judged status in one configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub status: String,
    pub actual: String,
    pub reason: Option<String>,
}

/// One column: a peer configuration's report.
#[derive(Debug, Clone)]
pub struct Column {
    pub label: String,
    pub cells: Vec<(String, Cell)>,
    /// The run was interrupted: its skipped checks were never run, so they are no drift.
    pub interrupted: bool,
    /// What the column was judged against and by which build: the profile's name, the
    /// harness revision, the start time.
    pub profile: Option<String>,
    pub revision: Option<String>,
    pub started_unix: Option<u64>,
}

/// The checks of every column, in order of first appearance, and the columns.
#[derive(Debug, Clone)]
pub struct Matrix {
    pub rows: Vec<String>,
    pub columns: Vec<Column>,
}

/// Reads one report; the column label is `label`, or the report's profile or peer name
/// with the file's name.
pub fn column(text: &str, file: &str, label: Option<&str>) -> Result<Column, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("{file}: not a JSON report: {e}"))?;
    if !v["schema"].as_str().is_some_and(|s| s.starts_with("rpcrdma-harness/report/")) {
        return Err(format!("{file}: not an rpcrdma-harness report (no \"schema\": \"rpcrdma-harness/report/...\")"));
    }
    let checks = v["checks"].as_array().ok_or_else(|| format!("{file}: the report has no \"checks\" array"))?;
    let mut cells = Vec::with_capacity(checks.len());
    for c in checks {
        let id = c["id"].as_str().ok_or_else(|| format!("{file}: a check without an \"id\""))?;
        let cell = Cell {
            status: c["status"].as_str().unwrap_or("unknown").to_string(),
            actual: c["actual"].as_str().unwrap_or_default().to_string(),
            reason: c["divergence_reason"].as_str().map(str::to_string),
        };
        cells.push((id.to_string(), cell));
    }
    let label = match label {
        Some(l) => l.to_string(),
        None => {
            let who = v["expectations"].as_str().or(v["peer"].as_str()).unwrap_or("peer");
            let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or(file);
            format!("{who} ({stem})")
        }
    };
    // The exact version that ran, and whether its profile had seen it.
    let label = match (v["peer_version"].as_str(), v["peer_version_seen"].as_bool()) {
        (Some(version), Some(false)) => format!("{label} [{version}, unseen by its profile]"),
        (Some(version), _) => format!("{label} [{version}]"),
        (None, _) => label,
    };
    Ok(Column {
        label,
        cells,
        interrupted: v["interrupted"].as_bool().unwrap_or(false),
        profile: v["expectations"].as_str().map(str::to_string),
        revision: v["tool"]["revision"].as_str().map(str::to_string),
        started_unix: v["started_unix"].as_u64(),
    })
}

impl Matrix {
    pub fn new(columns: Vec<Column>) -> Matrix {
        let mut seen = BTreeSet::new();
        let mut rows = Vec::new();
        for c in &columns {
            for (id, _) in &c.cells {
                if seen.insert(id.clone()) {
                    rows.push(id.clone());
                }
            }
        }
        Matrix { rows, columns }
    }

    /// The cell of `row` in column `col`; None when that report did not run the check.
    pub fn cell(&self, row: &str, col: usize) -> Option<&Cell> {
        self.columns[col].cells.iter().find(|(id, _)| id == row).map(|(_, c)| c)
    }

    /// Whether an interrupted run skipped `row` in column `col`: never run there, so the cell
    /// says nothing about drift.
    fn cut_short(&self, row: &str, col: usize) -> bool {
        self.columns[col].interrupted && self.cell(row, col).is_some_and(|c| c.status == "skipped")
    }

    /// How many cells of column `col` have each status, in legend order (statuses with no cell
    /// left out).
    pub fn totals(&self, col: usize) -> Vec<(&'static str, usize)> {
        LEGEND
            .iter()
            .map(|(st, _, _)| (*st, self.columns[col].cells.iter().filter(|(_, c)| c.status == *st).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }

    /// Column `col`'s totals as the pages print them: `96 ✔ 3 ◆`.
    fn totals_line(&self, col: usize) -> String {
        self.totals(col).iter().map(|(st, n)| format!("{n} {}", symbol(st))).collect::<Vec<_>>().join(" ")
    }

    /// The rows that differ.
    pub fn drifting(&self) -> usize {
        self.rows.iter().filter(|r| self.drifts(r)).count()
    }

    /// One line per column: its profile, the harness revision and when it ran.
    fn provenance(&self) -> Vec<String> {
        self.columns
            .iter()
            .map(|c| {
                let when = c.started_unix.map_or("unknown".to_string(), crate::clock::utc);
                format!(
                    "{}: profile {}, harness revision {}, started {when}{}",
                    c.label,
                    c.profile.as_deref().unwrap_or("none"),
                    c.revision.as_deref().unwrap_or("unknown"),
                    if c.interrupted { ", interrupted (its skipped checks are not counted as drift)" } else { "" }
                )
            })
            .collect()
    }

    /// Whether the configurations disagree on `row`. A missing cell counts as different in a
    /// report of the same side (a server report without a server check), and not at all in a
    /// report of the other side (a client report has no server checks to run).
    pub fn drifts(&self, row: &str) -> bool {
        let side = |id: &str| client::all().any(|c| c.info.id == id);
        let mine = (0..self.columns.len()).filter(|&i| {
            let client_column = self.columns[i].cells.iter().any(|(id, _)| side(id));
            client_column == side(row)
        });
        let statuses: BTreeSet<Option<&str>> =
            mine.filter(|&i| !self.cut_short(row, i)).map(|i| self.cell(row, i).map(|c| c.status.as_str())).collect();
        statuses.len() > 1
    }

    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "| check | {} | drift |",
            self.columns.iter().map(|c| md(&c.label)).collect::<Vec<_>>().join(" | ")
        );
        let _ = writeln!(s, "|---|{}---|", "---|".repeat(self.columns.len()));
        for row in &self.rows {
            let cells: Vec<String> = (0..self.columns.len())
                .map(|i| match self.cell(row, i) {
                    Some(c) => format!("{} {}", symbol(&c.status), c.status),
                    None => "·".to_string(),
                })
                .collect();
            let drift = if self.drifts(row) { "≠" } else { "" };
            let _ = writeln!(s, "| `{row}` | {} | {drift} |", cells.join(" | "));
        }
        let totals: Vec<String> = (0..self.columns.len()).map(|i| self.totals_line(i)).collect();
        let _ = writeln!(s, "| **totals** | {} | |", totals.join(" | "));
        let _ = writeln!(
            s,
            "\n{} checks, {} configurations, {} rows that differ.",
            self.rows.len(),
            self.columns.len(),
            self.drifting()
        );
        for line in self.provenance() {
            let _ = writeln!(s, "- {}", md(&line));
        }
        let _ = writeln!(
            s,
            "Legend: {}",
            LEGEND.iter().map(|(st, sym, _)| format!("{sym} {st}")).collect::<Vec<_>>().join(", ")
        );
        s
    }

    pub fn html(&self) -> String {
        let mut s = String::new();
        s.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n");
        s.push_str("<title>rpcrdma conformance matrix</title>\n<style>\n");
        s.push_str(CSS);
        s.push_str("</style></head><body>\n<h1>RPC-over-RDMA conformance matrix</h1>\n");
        let _ = writeln!(
            s,
            "<p>{} checks, {} configurations, <strong>{}</strong> rows that differ (marked ≠). Hover a cell for what the peer did.</p>",
            self.rows.len(),
            self.columns.len(),
            self.drifting()
        );
        s.push_str("<ul class=\"provenance\">");
        for line in self.provenance() {
            let _ = write!(s, "<li>{}</li>", esc(&line));
        }
        s.push_str("</ul>\n");
        s.push_str("<p class=\"legend\">");
        for (status, sym, class) in LEGEND {
            let _ = write!(s, "<span class=\"{class}\">{sym} {status}</span> ");
        }
        s.push_str("</p>\n<table>\n<thead><tr><th>check</th>");
        for c in &self.columns {
            let _ = write!(s, "<th>{}</th>", esc(&c.label));
        }
        s.push_str("<th>≠</th></tr></thead>\n<tbody>\n");
        for row in &self.rows {
            let drift = self.drifts(row);
            let _ = write!(s, "<tr{}><td class=\"id\">{}</td>", if drift { " class=\"drift\"" } else { "" }, esc(row));
            for i in 0..self.columns.len() {
                match self.cell(row, i) {
                    Some(c) => {
                        let mut title = c.actual.clone();
                        if let Some(r) = &c.reason {
                            let _ = write!(title, "\n\nprofile: {r}");
                        }
                        let class = LEGEND.iter().find(|(st, _, _)| *st == c.status).map_or("unknown", |l| l.2);
                        // The footnote is the profile's reason for an expected divergence only.
                        let mark = if c.status == "expected-divergence" && c.reason.is_some() { "†" } else { "" };
                        let _ = write!(
                            s,
                            "<td class=\"cell {class}\" title=\"{}\">{} {}{mark}</td>",
                            esc(&title),
                            symbol(&c.status),
                            esc(&c.status)
                        );
                    }
                    None => s.push_str("<td class=\"cell absent\" title=\"not run in this configuration\">·</td>"),
                }
            }
            let _ = writeln!(s, "<td>{}</td></tr>", if drift { "≠" } else { "" });
        }
        s.push_str("</tbody><tfoot><tr><th>totals</th>");
        for i in 0..self.columns.len() {
            let t = self.totals_line(i);
            let _ = write!(s, "<td>{}</td>", esc(&t));
        }
        s.push_str("<td></td></tr></tfoot></table>\n");
        s.push_str("<p>† an expected divergence: the profile's reason is in the cell's hover text.</p>\n");
        s.push_str("</body></html>\n");
        s
    }
}

/// (status, symbol, CSS class).
const LEGEND: [(&str, &str, &str); 9] = [
    ("pass", "✔", "pass"),
    ("pass-lax", "~", "lax"),
    ("expected-divergence", "◆", "div"),
    ("fail", "✘", "fail"),
    ("unexpected-pass", "‼", "fail"),
    ("unsupported", "?", "unsup"),
    ("skipped", "-", "skip"),
    ("inconclusive", "◌", "inconc"),
    ("error", "E", "fail"),
];

const CSS: &str = "body{font-family:system-ui,sans-serif;margin:1.5em}\
table{border-collapse:collapse;font-size:13px}\
th,td{border:1px solid #ccc;padding:3px 6px;white-space:nowrap}\
thead th{position:sticky;top:0;background:#f4f4f4}\
td.id{font-family:monospace}\
tr.drift td.id{font-weight:bold}\
.pass{background:#e3f6e3}.lax{background:#f6f2d8}.div{background:#e6e6fa}\
.fail{background:#f9d6d6}.unsup{background:#eee}.skip{background:#fafafa;color:#888}\
.inconc{background:#fdf0dc}\
.absent{color:#bbb}.legend span{padding:2px 6px;margin-right:4px}\n";

fn symbol(status: &str) -> &'static str {
    LEGEND.iter().find(|(st, _, _)| *st == status).map_or("?", |l| l.1)
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn md(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn run(args: MatrixArgs) -> Outcome {
    let mut columns: Vec<Column> = Vec::with_capacity(args.reports.len());
    let mut files = BTreeSet::new();
    for r in &args.reports {
        let (file, label) = match r.split_once('=') {
            Some((f, l)) => (f, Some(l)),
            None => (r.as_str(), None),
        };
        // The same report twice (by any path) is two identical columns: refused.
        let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| PathBuf::from(file));
        if !files.insert(canonical) {
            return Err(usage(format!("{file} is given twice")));
        }
        let text = crate::input::read_text(std::path::Path::new(file), "report", crate::input::MAX_REPORT)
            .map_err(HarnessError::Usage)?;
        let c = column(&text, file, label).map_err(HarnessError::Usage)?;
        if columns.iter().any(|o| o.label == c.label) {
            return Err(usage(format!("two columns are labelled {:?}; name them with REPORT.json=LABEL", c.label)));
        }
        columns.push(c);
    }
    let m = Matrix::new(columns);
    let mut wrote = false;
    if let Some(path) = &args.html {
        std::fs::write(path, m.html())
            .map_err(|e| HarnessError::Environment(format!("--html {}: {e}", path.display())))?;
        wrote = true;
    }
    match &args.markdown {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::write(p, m.markdown())
                .map_err(|e| HarnessError::Environment(format!("--markdown {}: {e}", p.display())))?;
        }
        Some(_) => print!("{}", m.markdown()),
        None if !wrote => print!("{}", m.markdown()),
        None => {}
    }
    if args.fail_on_drift && m.drifting() > 0 {
        eprintln!("{} rows differ between configurations (--fail-on-drift)", m.drifting());
        return Ok(Ending::Failed);
    }
    Ok(Ending::AsExpected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(checks: &[(&str, &str, &str, Option<&str>)]) -> String {
        let checks: Vec<Value> = checks
            .iter()
            .map(|(id, status, actual, reason)| {
                serde_json::json!({"id": id, "status": status, "actual": actual, "divergence_reason": reason})
            })
            .collect();
        serde_json::json!({"schema": "rpcrdma-harness/report/v1", "peer": "p", "expectations": null, "checks": checks})
            .to_string()
    }

    #[test]
    fn rows_are_the_union_and_drift_is_marked() {
        let a =
            column(&report(&[("x/1/a", "pass", "ok", None), ("x/1/b", "fail", "bad <b>", None)]), "a.json", Some("A"))
                .unwrap();
        let b = column(
            &report(&[("x/1/a", "pass", "ok", None), ("x/1/c", "expected-divergence", "closes", Some("does X"))]),
            "b.json",
            Some("B"),
        )
        .unwrap();
        let m = Matrix::new(vec![a, b]);
        assert_eq!(m.rows, ["x/1/a", "x/1/b", "x/1/c"]);
        assert!(!m.drifts("x/1/a"));
        assert!(m.drifts("x/1/b") && m.drifts("x/1/c"));
        let md = m.markdown();
        assert!(md.contains("| `x/1/a` | ✔ pass | ✔ pass |  |"), "{md}");
        assert!(md.contains("| `x/1/b` | ✘ fail | · | ≠ |"), "{md}");
        assert!(md.contains("3 checks, 2 configurations, 2 rows that differ."), "{md}");
        // A client report beside them: the server rows it lacks do not drift; a client row
        // one client report lacks does.
        let c1 = client::all().next().expect("a client check").info.id;
        let cc = column(&report(&[(c1, "pass", "ok", None)]), "c.json", Some("C")).unwrap();
        let cd = column(&report(&[("x/1/a", "pass", "ok", None)]), "d.json", Some("D")).unwrap();
        let both = Matrix::new(vec![column(&report(&[("x/1/a", "pass", "ok", None)]), "a.json", None).unwrap(), cc]);
        assert!(!both.drifts("x/1/a"), "a server check missing from a client report");
        assert!(!both.drifts(c1), "a client check missing from a server report");
        let cc2 = column(&report(&[(c1, "pass", "ok", None)]), "c.json", Some("C")).unwrap();
        let cc3 = column(&report(&[(c1, "fail", "no", None)]), "e.json", Some("E")).unwrap();
        assert!(Matrix::new(vec![cd, cc2, cc3]).drifts(c1), "two client reports that differ");
        let html = m.html();
        assert_eq!(html.matches("<td class=\"cell").count(), 6);
        assert!(html.contains("title=\"bad &lt;b&gt;\""), "the actual text is escaped");
        assert!(html.contains("profile: does X"));
        assert!(!html.contains("<b>"));
    }

    #[test]
    fn labels_and_errors() {
        let c = column(&report(&[]), "dir/linux.json", None).unwrap();
        assert_eq!(c.label, "p (linux)");
        // The exact version that ran is in the column's heading, and an unseen one says so.
        let mut r: Value = serde_json::from_str(&report(&[])).unwrap();
        r["peer_version"] = "6.12.118-1".into();
        r["peer_version_seen"] = false.into();
        let c = column(&r.to_string(), "k.json", Some("6.12 server")).unwrap();
        assert_eq!(c.label, "6.12 server [6.12.118-1, unseen by its profile]");
        r["peer_version_seen"] = true.into();
        assert_eq!(column(&r.to_string(), "k.json", Some("K")).unwrap().label, "K [6.12.118-1]");
        assert!(column("{}", "x.json", None).unwrap_err().contains("not an rpcrdma-harness report"));
        assert!(column("nope", "x.json", None).unwrap_err().contains("not a JSON report"));
    }

    #[test]
    fn the_footnote_marks_expected_divergences_only_and_symbols_are_distinct() {
        let c = column(
            &report(&[
                ("x/1/a", "expected-divergence", "closes", Some("does X")),
                ("x/1/b", "unexpected-pass", "ok", Some("listed, but passed")),
                ("x/1/c", "error", "broke", None),
            ]),
            "a.json",
            Some("A"),
        )
        .unwrap();
        let html = Matrix::new(vec![c]).html();
        assert_eq!(html.matches("†</td>").count(), 1, "{html}");
        let symbols: BTreeSet<&str> = LEGEND.iter().map(|l| l.1).collect();
        assert_eq!(symbols.len(), LEGEND.len(), "one symbol per status");
        assert!(html.contains("<tfoot>") && html.contains("1 ◆ 1 ‼ 1 E"), "{html}");
    }
}
