//! The exact version of the peer under test, held against the versions its expectation
//! profile was measured on: a kernel line's profile applies to every point release of the
//! line, and a release the profile has not seen is judged all the same, with the report
//! saying so (Debian moving 6.12.117 to 6.12.118 must not stop a run, nor pass unremarked).

use rpcrdma_conformance::expectations::Expectations;
use serde_json::{json, Value};

#[derive(Debug, Clone, Default, clap::Args)]
pub struct PeerVersionArgs {
    /// The exact version of the peer under test, written as its profile's `measured` list
    /// writes versions (for a Debian kernel, the package version: `6.12.118-1`). Reports name
    /// it, and say whether the profile was measured on it.
    #[arg(long, value_name = "VERSION")]
    pub peer_version: Option<String>,
}

/// The peer's version and what the profile says of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PeerVersion {
    pub version: Option<String>,
    /// The profile's name (its `peer`), when one was loaded.
    pub profile: Option<String>,
    /// The profile's `measured` versions (empty without a profile).
    pub measured: Vec<String>,
    /// Whether the profile lists the version; None without a version or a profile.
    pub seen: Option<bool>,
}

impl PeerVersion {
    pub fn new(version: Option<&str>, profile: Option<&Expectations>) -> PeerVersion {
        let measured = profile.map(|p| p.measured.clone()).unwrap_or_default();
        let seen = version.zip(profile).map(|(v, p)| p.has_measured(v));
        PeerVersion { version: version.map(str::to_string), profile: profile.map(|p| p.peer.clone()), measured, seen }
    }

    /// Prints [`PeerVersion::line`] with the text report, unless quiet.
    pub fn announce(&self, quiet: bool) {
        if let Some(line) = self.line().filter(|_| !quiet) {
            crate::textln!("{line}");
        }
    }

    /// One line for the text report: which version ran and what the profile has seen; None
    /// when neither a version nor a profile's versions are known.
    pub fn line(&self) -> Option<String> {
        let profile = self.profile.as_deref();
        let measured =
            if self.measured.is_empty() { "no version listed".to_string() } else { self.measured.join(", ") };
        match (&self.version, profile, self.seen) {
            (Some(v), Some(p), Some(false)) => Some(format!(
                "peer version {v}: not one the profile {p} was measured on ({measured}); judged against it all the same"
            )),
            (Some(v), Some(p), _) => Some(format!("peer version {v}: the profile {p} was measured on it")),
            (Some(v), None, _) => Some(format!("peer version {v}")),
            (None, Some(p), _) if !self.measured.is_empty() => {
                Some(format!("the profile {p} was measured on {measured}; this peer's version was not given"))
            }
            _ => None,
        }
    }

    /// The report's fields: `peer_version`, `profile_measured_on`, `peer_version_seen`.
    pub fn json_fields(&self) -> [(&'static str, Value); 3] {
        [
            ("peer_version", json!(self.version)),
            ("profile_measured_on", json!(self.measured)),
            ("peer_version_seen", json!(self.seen)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Expectations {
        Expectations::from_json(r#"{"peer": "linux-6.12", "measured": ["6.12.117-1"], "divergences": []}"#).unwrap()
    }

    #[test]
    fn an_unseen_version_is_named_and_judged() {
        let p = profile();
        let v = PeerVersion::new(Some("6.12.118-1"), Some(&p));
        assert_eq!(v.seen, Some(false));
        let line = v.line().unwrap();
        assert!(line.contains("6.12.118-1") && line.contains("not one") && line.contains("6.12.117-1"), "{line}");
        let seen = PeerVersion::new(Some("6.12.117-1"), Some(&p));
        assert_eq!(seen.seen, Some(true));
        assert!(!seen.line().unwrap().contains("not one"));
    }

    #[test]
    fn without_a_version_or_profile_nothing_is_claimed() {
        assert_eq!(PeerVersion::new(None, None).line(), None);
        assert_eq!(PeerVersion::new(Some("1.0"), None).seen, None);
        assert_eq!(PeerVersion::new(None, Some(&profile())).seen, None);
        let fields = PeerVersion::new(Some("6.12.118-1"), Some(&profile())).json_fields();
        assert_eq!(fields[2], ("peer_version_seen", json!(false)));
    }
}
