// The oracle's side of the driver: decoding with the decoder xdrgen generated from the
// RFC 8166 XDR (oracle/), for the Version One forms it covers.

use std::hint::black_box;

/// The forms the oracle decodes (Version One transport headers).
pub fn oracle_supports(form: &str) -> bool {
    matches!(form, "msg-null" | "msg-read-write2" | "nomsg-reply" | "err-vers")
}

/// Decodes `b` with the oracle `n` times.
pub fn oracle_run(form: &str, b: &[u8], n: u64) -> Result<(), String> {
    rpcrdma_oracle::decode(b).map_err(|e| format!("the oracle rejects {form}: {e:?}"))?;
    super::repeat(n, || rpcrdma_oracle::decode(black_box(b)).is_ok());
    Ok(())
}

/// Each supported form decodes with the oracle (printed by `verify`).
pub fn verify() -> Vec<String> {
    ["msg-null", "msg-read-write2", "nomsg-reply", "err-vers"]
        .iter()
        .map(|f| match rpcrdma_oracle::decode(&super::bytes(f)) {
            Ok(_) => format!("{f}: decodes"),
            Err(e) => format!("{f}: REJECTED {e:?}"),
        })
        .collect()
}
