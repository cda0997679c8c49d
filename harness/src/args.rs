//! Checked command-line values: durations in seconds and the credit grant. Each is refused by
//! the argument parser (exit 2, naming the option) rather than overflowing later. And the
//! options that `run` and `serve` share for their text.

use std::time::Duration;

use clap::Args;

/// The longest `--timeout`: an hour per reply is already far beyond any RDMA round trip.
pub const MAX_TIMEOUT_SECS: f64 = 3600.0;
/// The longest `--idle` and `--max-time`: a week.
pub const MAX_SERVE_SECS: f64 = 7.0 * 24.0 * 3600.0;
/// The largest `--grant`. RFC 8166 3.3.1 requires a Receive posted for every credit granted,
/// and RDMA devices cap a receive queue's depth (`max_qp_wr`) well below this: a larger grant
/// could never be honoured, and would only cost memory (a posted Receive per credit).
pub const MAX_GRANT: u32 = 65_536;

/// How the text is printed (`run` and `serve`).
#[derive(Debug, Clone, Default, Args)]
pub struct TextArgs {
    /// Print only the closing line (`N passed, N failed, N skipped`) and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

fn secs(s: &str, max: f64) -> Result<Duration, String> {
    let v: f64 = s.trim().parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("{s:?}: give a positive, finite number of seconds"));
    }
    if v > max {
        return Err(format!("{s:?}: at most {max} seconds"));
    }
    Ok(Duration::from_secs_f64(v))
}

/// `--timeout`: (0, 3600] seconds.
pub fn timeout(s: &str) -> Result<Duration, String> {
    secs(s, MAX_TIMEOUT_SECS)
}

/// `--idle`, `--max-time`: (0, one week] seconds.
pub fn serve_secs(s: &str) -> Result<Duration, String> {
    secs(s, MAX_SERVE_SECS)
}

/// `--grant`: 1 ..= 65536.
pub fn grant(s: &str) -> Result<u32, String> {
    let v: u64 = s.trim().parse().map_err(|_| format!("{s:?} is not a credit count"))?;
    if v == 0 {
        return Err("at least 1 (RFC 8166 3.3.1: a zero grant deadlocks)".into());
    }
    if v > u64::from(MAX_GRANT) {
        return Err(format!(
            "at most {MAX_GRANT}: a Receive must be posted for every credit granted (RFC 8166 3.3.1), \
             and no RDMA receive queue is that deep"
        ));
    }
    Ok(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(timeout("2").unwrap(), Duration::from_secs(2));
        assert_eq!(timeout("0.5").unwrap(), Duration::from_millis(500));
        for bad in ["0", "-1", "nan", "inf", "-inf", "1e20", "1.8e19", "3600.5", "x", ""] {
            assert!(timeout(bad).is_err(), "{bad}");
        }
        assert!(serve_secs("604800").is_ok());
        assert!(serve_secs("604801").is_err());
        assert!(serve_secs("1e300").is_err());
    }

    #[test]
    fn grants() {
        assert_eq!(grant("1").unwrap(), 1);
        assert_eq!(grant("65536").unwrap(), 65536);
        for bad in ["0", "65537", "4294967295", "99999999999999999999", "-1", "x"] {
            assert!(grant(bad).is_err(), "{bad}");
        }
    }
}
