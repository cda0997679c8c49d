//! The wire profile: the spec choices left open (`rpcrdma_codec::Profile`) that one run reads
//! and writes the wire under, chosen by name with `--profile NAME` (repeatable) on `decode`,
//! `run`, `serve`, `replay` and `fuzz`, and recorded by name in their reports, reproducers and
//! findings. Not the expectation profile (`--expect`, [`crate::profiles`]).

use clap::Args;
use rpcrdma_codec::Profile;
use serde_json::Value;

use crate::exit::{usage, HarnessError};

/// `--profile NAME`, repeatable.
#[derive(Debug, Clone, Default, Args)]
pub struct WireArgs {
    /// A spec choice the wire is read and written under, on both sides, for the whole run
    /// (repeatable; of two choices of one field the later wins): rfc5666-error-arm,
    /// msgp-above, msgp-origin-payload, pd-offset-zero, v2-00, v2-errors-02, v2-errors-04,
    /// rtrext-literal, props-v2-03, subset-msb. None: the project's resolution of each.
    #[arg(long = "profile", value_name = "NAME")]
    pub choices: Vec<String>,
}

impl WireArgs {
    /// The profile the choices make of the default, or a usage error (exit 2) naming the
    /// unknown choice and listing the known ones.
    pub fn profile(&self) -> Result<Profile, HarnessError> {
        apply(Profile::default(), &self.choices)
    }

    /// As [`WireArgs::profile`], over the choices a reproducer, finding or vector file
    /// recorded (`recorded`): the command line's apply after them.
    pub fn over(&self, recorded: &[String]) -> Result<Profile, HarnessError> {
        apply(apply(Profile::default(), recorded)?, &self.choices)
    }
}

/// `base` with each named choice applied in order; an unknown name is a usage error that
/// lists the known ones.
pub fn apply<S: AsRef<str>>(mut base: Profile, names: &[S]) -> Result<Profile, HarnessError> {
    for name in names {
        let name = name.as_ref();
        if !base.apply(name) {
            return Err(usage(format!("unknown profile choice {name:?}; known: {}", Profile::NAMES.join(", "))));
        }
    }
    Ok(base)
}

/// The choices in force, by name (none for the default): what reports and reproducers record.
pub fn names(p: &Profile) -> Vec<&'static str> {
    p.choices().collect()
}

/// The choices a reproducer or finding file recorded under `"profile"` (none when absent:
/// files written before it was recorded, or under the default).
pub fn recorded(v: &Value) -> Result<Vec<String>, String> {
    match v.get("profile") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|n| n.as_str().map(str::to_string).ok_or_else(|| format!("\"profile\": {n} is not a choice name")))
            .collect(),
        Some(other) => Err(format!("\"profile\": {other} is not a list of choice names")),
    }
}

/// The text header's account of the choices: `, wire profile rfc5666-error-arm, subset-msb`,
/// or nothing under the default.
pub fn clause(p: &Profile) -> String {
    let n = names(p);
    if n.is_empty() {
        String::new()
    } else {
        format!(", wire profile {}", n.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_choice_is_a_usage_error_listing_the_known() {
        let e = apply(Profile::default(), &["msgp-above", "no-such"]).unwrap_err();
        let HarnessError::Usage(m) = e else { panic!("not a usage error: {e:?}") };
        assert!(m.contains("\"no-such\"") && m.contains("rfc5666-error-arm") && m.contains("subset-msb"), "{m}");
    }

    #[test]
    fn the_command_line_applies_after_the_recorded_choices() {
        let args = WireArgs { choices: vec!["v2-errors-04".into()] };
        let p = args.over(&["v2-errors-02".into(), "subset-msb".into()]).unwrap();
        assert_eq!(names(&p), ["v2-errors-04", "subset-msb"]);
        assert_eq!(clause(&p), ", wire profile v2-errors-04, subset-msb");
        assert_eq!(clause(&Profile::default()), "");
    }

    #[test]
    fn recorded_choices_are_read_or_refused() {
        assert_eq!(recorded(&serde_json::json!({})).unwrap(), Vec::<String>::new());
        assert_eq!(recorded(&serde_json::json!({"profile": ["msgp-above"]})).unwrap(), ["msgp-above"]);
        assert!(recorded(&serde_json::json!({"profile": "msgp-above"})).unwrap_err().contains("not a list"));
        assert!(recorded(&serde_json::json!({"profile": [3]})).unwrap_err().contains("not a choice"));
    }
}
