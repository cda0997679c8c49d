//! Expectation profiles (`--expect`): read, bounded, and checked against the catalogues.

use std::path::Path;

use rpcrdma_conformance::expectations::Expectations;

use crate::exit::{usage, HarnessError};

/// Loads an expectation profile and checks that every entry names a known check (a typo
/// would otherwise hide a divergence); None without a path.
pub fn load(path: Option<&Path>) -> Result<Option<Expectations>, HarnessError> {
    let Some(path) = path else { return Ok(None) };
    let known = crate::select::entries();
    let text = crate::input::read_text(path, "profile", crate::input::MAX_PROFILE)
        .map_err(|e| usage(format!("expectation {e}")))?;
    Expectations::from_json(&text)
        .and_then(|p| p.check_ids(|id| known.iter().any(|e| e.info.id == id)).map(|()| p))
        .map(Some)
        .map_err(|e| usage(format!("expectation profile {}: {e}", path.display())))
}
