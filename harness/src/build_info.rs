//! What harness this is: its version and the revision it was built from (in banners, reports
//! and finding files).

/// The harness's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The git revision the harness was built from (`git rev-parse HEAD` at build time), or
/// `unknown` when it was built outside a git checkout.
pub const REVISION: &str = env!("RPCRDMA_HARNESS_REVISION");
