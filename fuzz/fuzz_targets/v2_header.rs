//! Any bytes, under every Version Two profile: decode never panics; what decodes survives the
//! semantic check in both roles, formats, and has every optional operation's lists iterable
//! (the iterators re-read validated bytes and must yield exactly the counted elements).
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::check::Role;
use rpcrdma_codec::v2::{self, Body, Message, OptInfo};
use rpcrdma_codec::{xcharext, Profile};

/// The profile combinations that change how a Version Two header decodes.
const PROFILES: &[&[&str]] = &[
    &[],
    &["v2-00"],
    &["v2-errors-02"],
    &["v2-errors-04"],
    &["rtrext-literal"],
    &["props-v2-03"],
    &["subset-msb"],
    &["v2-00", "v2-errors-04", "rtrext-literal", "props-v2-03"],
];

fn spec_walk(s: &xcharext::XcharSpec<'_>) {
    assert_eq!(s.iter().count(), s.len());
    // Decoded values were typed when decoded, so typing them again cannot fail.
    for c in s.characteristics() {
        c.expect("a decoded xcharspec value types again");
    }
}

fn subset_walk(s: &xcharext::XcharSubset<'_>) {
    assert_eq!(s.words().count(), s.word_count());
    // Bits are bounded by 32 per word.
    assert!(s.bits().count() <= 32 * s.word_count());
}

fuzz_target!(|data: &[u8]| {
    for names in PROFILES {
        let mut p = Profile::default();
        for n in *names {
            assert!(p.apply(n));
        }
        let Ok(m) = Message::decode(data, &p) else { continue };
        assert!(m.payload_offset <= data.len());
        assert_eq!(m.header.encoded_len(), m.payload_offset);
        let _ = v2::check(&m, Role::Call);
        let _ = v2::check(&m, Role::Reply);
        let _ = format!("{}", m.header);
        match &m.header.body {
            Body::Msg(c) | Body::NoMsg(c) => {
                assert_eq!(c.lists.reads.segments().count(), c.lists.reads.len());
                assert_eq!(c.lists.writes.chunks().count(), c.lists.writes.len());
            }
            Body::Optional(o) => match &o.info {
                OptInfo::Xchar(op) => match op {
                    xcharext::Op::InitXch(x) => {
                        spec_walk(&x.start);
                        subset_walk(&x.nochg);
                    }
                    xcharext::Op::ReqXch(x) => spec_walk(&x.want),
                    xcharext::Op::RespXch(x) => {
                        subset_walk(&x.done);
                        subset_walk(&x.rej);
                        subset_walk(&x.pend);
                    }
                    xcharext::Op::UpdXch(x) => {
                        x.now.characteristic(p.property_ids).expect("a decoded value types again");
                    }
                },
                OptInfo::Rtr(op) => {
                    let _ = op.pslen();
                    let _ = rpcrdma_codec::rtrext::check(op, o.dir, m.payload.len());
                }
                OptInfo::Raw(_) => {}
            },
            Body::Error(_) => {}
        }
    }
});
