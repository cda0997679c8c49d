//! Choosing checks by selector (`run`, `serve`, `list`, profiles): an ID, an ID prefix or a
//! group; and the list of every check of both catalogues.

use rpcrdma_conformance::catalogue;
use rpcrdma_conformance::catalogue::client::{self, ClientCheck};
use rpcrdma_conformance::engine::{Check, CheckInfo};

use crate::exit::{usage, HarnessError};

/// A check of either catalogue, for `list`.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub info: &'static CheckInfo,
    /// A client check: judged by `serve`, not run by `run`.
    pub client: bool,
}

/// Every check: the server catalogue in run order, then the client checks.
pub fn entries() -> Vec<Entry> {
    let server = catalogue::all().into_iter().map(|c| Entry { info: &c.info, client: false });
    server.chain(catalogue::client::all().map(|c| Entry { info: &c.info, client: true })).collect()
}

/// Whether a check (its ID and groups) matches a selector: its exact ID, a prefix of it
/// ending at a `/` or at a section-number `.` (so `rfc8166/4.5` selects 4.5, 4.5.1, 4.5.2 but
/// not 4.50), or a group.
pub fn id_matches(id: &str, groups: &[&str], selector: &str) -> bool {
    let s = selector.trim_end_matches('/');
    id == s
        || id.strip_prefix(s).is_some_and(|rest| rest.starts_with('/') || rest.starts_with('.'))
        || groups.contains(&s)
}

/// The check ID or group nearest to a selector that matches nothing, when one is near
/// (a few edits away): `rfc8166/4.5/short-mesage-discarded` -> `...short-message-discarded`.
pub fn did_you_mean(selector: &str) -> Option<String> {
    let names = catalogue::infos().flat_map(|i| std::iter::once(i.id).chain(i.groups.iter().copied()));
    let (best, d) = names.map(|n| (n, edit_distance(selector, n))).min_by_key(|&(_, d)| d)?;
    (d <= 1.max(selector.len() / 5)).then(|| best.to_string())
}

/// Levenshtein distance over bytes.
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Whether `check` matches a selector (see [`id_matches`]).
pub fn matches(check: &Check, selector: &str) -> bool {
    id_matches(check.info.id, check.info.groups, selector)
}

/// The checks a selection names, in catalogue order; an error names a selector matching
/// nothing, and says so when the selection is empty after the exclusions.
pub fn select(select: &[String], exclude: &[String]) -> Result<Vec<&'static Check>, HarnessError> {
    let all = catalogue::all();
    for s in select.iter().chain(exclude) {
        if !all.iter().any(|c| matches(c, s)) {
            if catalogue::client::all().any(|c| id_matches(c.info.id, c.info.groups, s)) {
                return Err(usage(format!("{s:?} names only client checks: `rpcrdma-harness serve` judges those")));
            }
            let hint = did_you_mean(s).map(|m| format!("; did you mean {m:?}?")).unwrap_or_default();
            return Err(usage(format!("{s:?} matches no check{hint} (see `rpcrdma-harness list`)")));
        }
    }
    let chosen: Vec<&'static Check> = all
        .into_iter()
        .filter(|c| select.is_empty() || select.iter().any(|s| matches(c, s)))
        .filter(|c| !exclude.iter().any(|s| matches(c, s)))
        .collect();
    if chosen.is_empty() {
        return Err(usage(format!(
            "the selection is empty: --exclude {} leaves out every check {}",
            exclude.join(" --exclude "),
            if select.is_empty() { "there is".to_string() } else { format!("that {} selects", select.join(" ")) }
        )));
    }
    Ok(chosen)
}

/// The client checks the selectors name, in catalogue order (all when none is given); an
/// error names a selector that matches no client check.
pub fn select_client(selectors: &[String], exclude: &[String]) -> Result<Vec<&'static ClientCheck>, HarnessError> {
    let matches = |c: &ClientCheck, s: &str| id_matches(c.info.id, c.info.groups, s);
    if let Some(s) = selectors.iter().chain(exclude).find(|s| !client::all().any(|c| matches(c, s))) {
        return Err(usage(format!("{s:?} matches no client check (see `rpcrdma-harness list`)")));
    }
    let chosen: Vec<_> = client::all()
        .filter(|c| selectors.is_empty() || selectors.iter().any(|s| matches(c, s)))
        .filter(|c| !exclude.iter().any(|s| matches(c, s)))
        .collect();
    if chosen.is_empty() {
        return Err(usage(format!(
            "the selection is empty: --exclude {} leaves out every client check",
            exclude.join(" --exclude ")
        )));
    }
    Ok(chosen)
}
