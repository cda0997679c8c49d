//! `rpcrdma-harness export-tree DIR` (hidden): writes the reference responder's file tree into
//! a directory, so a real NFS server exports byte-identical files and the catalogue's checks
//! mean the same thing against both peers.

use std::path::Path;

use rpcrdma_peers::ulp::tree::{Kind, NodeId, Tree};

fn write_node(tree: &Tree, id: NodeId, at: &Path) -> std::io::Result<()> {
    let node = tree.node(id);
    let path = if id == tree.root() { at.to_path_buf() } else { at.join(&node.name) };
    match &node.kind {
        Kind::File(data) => std::fs::write(&path, data),
        Kind::Symlink(target) => {
            let _ = std::fs::remove_file(&path);
            std::os::unix::fs::symlink(String::from_utf8_lossy(target).as_ref(), &path)
        }
        Kind::Dir(children) => {
            std::fs::create_dir_all(&path)?;
            for c in children {
                write_node(tree, *c, &path)?;
            }
            Ok(())
        }
    }
}

pub fn run(dir: &Path) -> i32 {
    let tree = Tree::new();
    match write_node(&tree, tree.root(), dir) {
        Ok(()) => 0,
        Err(e) => {
            crate::errln!("error: {}: {e}", dir.display());
            2
        }
    }
}
