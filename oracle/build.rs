//! Generates the oracle's decoder from the RFC 8166 XDR with xdrgen.
//!
//! `xdr/rfc8166.x` is a verbatim copy of the XDR in RFC 8166 section 4.1.2 (via
//! shared/specs/xdr/rfc8166.x). Two mechanical edits are made to a copy in OUT_DIR, each
//! asserted to apply exactly once:
//!
//! 1. A prelude defines `uint32` and `uint64`, which the RFC uses without defining (they are
//!    `unsigned int` and `unsigned hyper`, RFC 4506 4.2 and 4.5).
//! 2. `xdr_rdma_segment target<>` becomes `target<MAX_SEGMENTS>`. xdr-codec allocates a
//!    vector of the claimed element count before reading the elements, so an unbounded count
//!    of 0xffffffff asks for 64 GiB. The oracle refuses inputs over MAX_INPUT bytes, and a
//!    count over MAX_INPUT / 16 cannot be satisfied by such an input (each segment is 16
//!    bytes), so the bound only turns an allocation blow-up into the rejection the input would
//!    get anyway. The differential tests compare accept/reject, not error kinds.

use std::path::PathBuf;

/// Keep in step with `MAX_INPUT` in src/lib.rs (checked there by a test).
const MAX_INPUT: usize = 16 * 1024;
const MAX_SEGMENTS: usize = MAX_INPUT / 16;

fn main() {
    println!("cargo:rerun-if-changed=xdr/rfc8166.x");
    println!("cargo:rerun-if-changed=build.rs");
    let spec = std::fs::read_to_string("xdr/rfc8166.x").expect("xdr/rfc8166.x");
    let unbounded = "struct xdr_rdma_segment target<>;";
    assert_eq!(spec.matches(unbounded).count(), 1, "the RFC 8166 XDR changed: {unbounded}");
    let bounded = spec.replace(unbounded, &format!("struct xdr_rdma_segment target<{MAX_SEGMENTS}>;"));
    let prelude = "typedef unsigned int uint32;\ntypedef unsigned hyper uint64;\n";
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let x = out.join("rfc8166.x");
    std::fs::write(&x, format!("{prelude}{bounded}")).unwrap();
    xdrgen::compile(x.to_str().expect("UTF-8 OUT_DIR")).expect("xdrgen compiles the RFC 8166 XDR");
    std::fs::write(out.join("max_input.rs"), format!("{MAX_INPUT}")).unwrap();
}
