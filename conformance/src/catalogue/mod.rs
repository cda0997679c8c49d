//! The catalogue: every check, with its stable ID from the spec section it tests, the
//! requirement quoted with its key word, the acceptable outcomes and a one-line rationale.

pub mod ccp;
pub mod client;
pub mod compound;
pub mod credits;
pub mod header;
pub mod inline;
pub mod nfs41_forward;
pub mod private_data;
pub mod read_chunks;
pub mod reply_chunk;
pub mod reverse;
mod steps;
pub mod v2;
pub mod write_chunks;

use crate::engine::{Check, CheckInfo};

/// Every check, in run order (the sanity check first).
pub fn all() -> Vec<&'static Check> {
    let mut v: Vec<&'static Check> = Vec::new();
    v.extend(header::CHECKS.iter());
    v.extend(credits::CHECKS.iter());
    v.extend(read_chunks::CHECKS.iter());
    v.extend(write_chunks::CHECKS.iter());
    v.extend(compound::CHECKS.iter());
    v.extend(nfs41_forward::CHECKS.iter());
    v.extend(reply_chunk::CHECKS.iter());
    v.extend(inline::CHECKS.iter());
    v.extend(private_data::CHECKS.iter());
    v.extend(ccp::CHECKS.iter());
    v.extend(v2::CHECKS.iter());
    v.extend(reverse::CHECKS.iter());
    v
}

/// What every check declares, server checks in run order then the client checks: the one list
/// the requirements matrix, the proofs and selectors read.
pub fn infos() -> impl Iterator<Item = &'static CheckInfo> {
    all().into_iter().map(|c| &c.info).chain(client::all().map(|c| &c.info))
}

/// The check every other check depends on (tlsfuzzer's "sanity").
pub const SANITY: &str = "rfc8166/4.2.4/null-call";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let all: Vec<_> = infos().collect();
        assert!(all.len() >= 15);
        for (i, c) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|o| o.id != c.id), "duplicate {}", c.id);
            let parts: Vec<&str> = c.id.split('/').collect();
            assert_eq!(parts.len(), 3, "{}", c.id);
            assert!(parts[1].chars().all(|ch| ch.is_ascii_digit() || ch == '.'), "{}", c.id);
            assert!(!c.judges.is_empty() && !c.rationale.is_empty() && !c.acceptable.is_empty(), "{}", c.id);
            // The quote comes from the matrix: every statement the check judges, by its ID.
            let quote = c.requirement();
            assert!(c.judged().all(|(id, _)| quote.contains(&format!("({id}"))), "{}: {quote}", c.id);
        }
        assert_eq!(all[0].id, SANITY);
    }
}
