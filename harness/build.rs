//! Embeds the git revision the harness is built from (`RPCRDMA_HARNESS_REVISION`), for the
//! reports' metadata: `git rev-parse HEAD` when git and a checkout are there, `unknown`
//! otherwise. Never fails the build.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    println!("cargo:rerun-if-env-changed=RPCRDMA_HARNESS_REVISION");
    let revision = std::env::var("RPCRDMA_HARNESS_REVISION").ok().filter(|s| !s.is_empty()).or_else(|| {
        let rev = git(&["rev-parse", "HEAD"])?;
        // Rebuild when HEAD moves (a commit, a checkout); only paths that exist are watched.
        for p in ["HEAD", "logs/HEAD"] {
            if let Some(path) = git(&["rev-parse", "--git-path", p]) {
                let path = std::path::PathBuf::from(path);
                let path = if path.is_absolute() {
                    path
                } else {
                    std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join(path)
                };
                if path.exists() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
        }
        Some(rev)
    });
    if revision.is_none() {
        // git failed (not installed, not a checkout, refused): a checkout above us is still
        // watched, so the next commit or checkout there builds this again rather than keeping
        // "unknown" for good.
        let dir = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
        if let Some(git_dir) = dir.ancestors().map(|d| d.join(".git")).find(|d| d.exists()) {
            for p in [git_dir.join("HEAD"), git_dir.join("logs/HEAD")] {
                if p.exists() {
                    println!("cargo:rerun-if-changed={}", p.display());
                }
            }
        }
    }
    println!("cargo:rustc-env=RPCRDMA_HARNESS_REVISION={}", revision.unwrap_or_else(|| "unknown".into()));
}
