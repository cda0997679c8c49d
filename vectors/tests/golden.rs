//! Every golden vector decodes (or fails) as its file says, re-encodes to the same bytes, and
//! its full decoding matches the reviewed snapshot in `tests/snapshots/`.

use std::path::Path;

#[test]
fn golden_vectors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let results = rpcrdma_vectors::verify_dir(root);
    assert!(results.len() >= 40, "only {} vectors found under {}", results.len(), root.display());
    let mut failures = Vec::new();
    for r in &results {
        match &r.result {
            Ok(decoding) => {
                let snap_name = r.name.replace('/', "__");
                let mut settings = insta::Settings::clone_current();
                settings.set_snapshot_path("snapshots");
                settings.set_prepend_module_to_snapshot(false);
                settings.set_input_file(root.join(format!("{}.vec", r.name)));
                settings.bind(|| insta::assert_snapshot!(snap_name, decoding));
            }
            Err(e) => failures.push(format!("{}: {e}", r.name)),
        }
    }
    assert!(failures.is_empty(), "{} of {} vectors failed:\n{}", failures.len(), results.len(), failures.join("\n"));
}

#[test]
fn a_wrong_fact_is_caught() {
    // The runner must be able to fail: a copy of a vector with one fact changed.
    let dir = std::env::temp_dir().join(format!("rpcrdma-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("wrong-credit.vec");
    std::fs::write(
        &path,
        "name: wrong-credit\nkind: header\nexpect: ok\nfield: rdma_credit = 33\nhex:\n00000001 00000001 00000020 00000003\n",
    )
    .unwrap();
    let r = rpcrdma_vectors::check_vector(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    let err = r.unwrap_err();
    assert!(err.contains("rdma_credit: want 33, got 32"), "{err}");
}

#[test]
fn every_vector_file_is_embedded_and_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let on_disk = rpcrdma_vectors::verify_dir(root).len();
    assert_eq!(rpcrdma_vectors::embedded_names().count(), on_disk);
    let v = rpcrdma_vectors::embedded("v1/notbool-writes-7").expect("embedded");
    assert_eq!(v.kind, "header");
    assert_eq!(&v.bytes[20..24], &[0, 0, 0, 7], "the write-list discriminator of the vector");
}
