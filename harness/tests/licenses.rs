//! The licence texts travel with every published crate (issue 24): the workspace's
//! `license = "MIT OR Apache-2.0"` names two licences, and `cargo package` carries only files
//! inside a crate's directory, so each publishable crate holds both texts (links to the root's).

use std::path::Path;

#[test]
fn every_publishable_crate_carries_both_licence_texts() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(workspace.contains("license = \"MIT OR Apache-2.0\""), "the workspace licence changed: update the texts");
    let mit = std::fs::read_to_string(root.join("LICENSE-MIT")).unwrap();
    let apache = std::fs::read_to_string(root.join("LICENSE-APACHE")).unwrap();
    assert!(mit.contains("Permission is hereby granted, free of charge"), "LICENSE-MIT is not the MIT licence");
    assert!(apache.contains("Apache License") && apache.contains("Version 2.0, January 2004"));
    let mut crates = 0;
    for entry in std::fs::read_dir(root).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        if dir == root || manifest.contains("publish = false") || !manifest.contains("license.workspace = true") {
            continue;
        }
        crates += 1;
        for (name, want) in [("LICENSE-MIT", &mit), ("LICENSE-APACHE", &apache)] {
            let got =
                std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}: {name}: {e}", dir.display()));
            assert_eq!(&got, want, "{}: {name} differs from the root's", dir.display());
        }
    }
    assert!(crates >= 6, "only {crates} publishable crates found");
}
