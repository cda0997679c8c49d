//! Any bytes: RDMA-CM private data decodes, is found and yields effective parameters without
//! panicking under both locate rules; what decodes re-encodes to the same eight octets; the
//! three entry points agree with each other.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rpcrdma_codec::private_data::{self, Lookup, PrivateData, Status};
use rpcrdma_codec::Profile;

fuzz_target!(|data: &[u8]| {
    if let Ok(pd) = PrivateData::decode(data) {
        assert_eq!(&pd.to_bytes()[..], &data[..8]);
        let mut out = [0u8; 8];
        assert_eq!(pd.encode_into(&mut out), Ok(8));
        assert_eq!(&out[..], &data[..8]);
    }
    for rule in ["", "pd-offset-zero"] {
        let mut p = Profile::default();
        if !rule.is_empty() {
            assert!(p.apply(rule));
        }
        let eff = private_data::effective(data, &p);
        match private_data::find(data, &p) {
            Ok(Lookup::Found { at, data: pd }) => {
                assert_eq!(eff.status, Status::Ok);
                assert_eq!(eff.found_at, Some(at));
                assert_eq!(eff.params, pd);
                assert_eq!(PrivateData::decode(&data[at..]), Ok(pd));
            }
            Ok(Lookup::Absent) => {
                assert_eq!(eff.status, Status::Absent);
                assert_eq!(eff.params, PrivateData::DEFAULT);
            }
            Ok(Lookup::UnrecognisedVersion { at, version }) => {
                assert_eq!(eff.status, Status::UnrecognisedVersion);
                assert_ne!(version, private_data::VERSION);
                assert_eq!(data[at + 4], version);
            }
            Err(e) => {
                assert_eq!(eff.status, Status::Truncated);
                assert!(e.offset <= data.len());
            }
        }
        let _ = format!("{}", eff.params);
    }
});
