//! `rpcrdma-harness export-tree DIR`: writes the reference responder's file tree into a
//! directory, so a real NFS server exports byte-identical files and the catalogue's checks
//! mean the same thing against both peers. Idempotent: a second run finds every object as
//! the first left it and changes nothing; an object a run changed (a check WRITEs `scratch`)
//! is put back. Entries the reference tree does not have are named, never removed.

use std::path::{Path, PathBuf};

use clap::Args;
use rpcrdma_peers::ulp::tree::{Kind, NodeId, Tree};

use crate::exit::{Ending, HarnessError, Outcome};
use crate::outln;

#[derive(Debug, Args)]
pub struct ExportTreeArgs {
    /// The directory to fill (created when missing): the directory your server exports.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// What was done to one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Created,
    Replaced,
    Unchanged,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Replaced => "replaced",
            Action::Unchanged => "unchanged",
        }
    }
}

struct Walk {
    counts: [usize; 3],
    extra: Vec<PathBuf>,
}

impl Walk {
    fn note(&mut self, action: Action, what: &str, path: &Path) {
        self.counts[action as usize] += 1;
        outln!("{:<9} {what:<7} {}", action.name(), path.display());
    }
}

fn err(path: &Path, e: impl std::fmt::Display) -> String {
    format!("{}: {e}", path.display())
}

fn write_node(tree: &Tree, id: NodeId, path: &Path, walk: &mut Walk) -> Result<(), String> {
    let node = tree.node(id);
    // symlink_metadata: never follow a link someone put where a file belongs.
    let existing = std::fs::symlink_metadata(path).ok();
    match &node.kind {
        Kind::File(data) => {
            let action = match &existing {
                None => Action::Created,
                Some(m) if m.is_file() && m.len() == data.len() as u64 => match std::fs::read(path) {
                    Ok(old) if old == *data => Action::Unchanged,
                    _ => Action::Replaced,
                },
                Some(m) if m.is_dir() => return Err(err(path, "a directory where the reference tree has a file")),
                Some(_) => Action::Replaced,
            };
            if action != Action::Unchanged {
                if existing.as_ref().is_some_and(|m| !m.is_file()) {
                    std::fs::remove_file(path).map_err(|e| err(path, e))?;
                }
                std::fs::write(path, data).map_err(|e| err(path, e))?;
            }
            walk.note(action, &format!("file {}B", data.len()), path);
        }
        Kind::Symlink(target) => {
            let target = String::from_utf8_lossy(target).into_owned();
            let action = match &existing {
                None => Action::Created,
                Some(m) if m.file_type().is_symlink() => match std::fs::read_link(path) {
                    Ok(t) if t.as_os_str() == target.as_str() => Action::Unchanged,
                    _ => Action::Replaced,
                },
                Some(m) if m.is_dir() => return Err(err(path, "a directory where the reference tree has a symlink")),
                Some(_) => Action::Replaced,
            };
            if action != Action::Unchanged {
                if existing.is_some() {
                    std::fs::remove_file(path).map_err(|e| err(path, e))?;
                }
                std::os::unix::fs::symlink(&target, path).map_err(|e| err(path, e))?;
            }
            walk.note(action, "symlink", path);
        }
        Kind::Dir(children) => {
            let action = match &existing {
                None => Action::Created,
                Some(m) if m.is_dir() => Action::Unchanged,
                Some(_) => return Err(err(path, "exists and is not a directory")),
            };
            if action == Action::Created {
                std::fs::create_dir_all(path).map_err(|e| err(path, e))?;
            }
            walk.note(action, "dir", path);
            for c in children {
                write_node(tree, *c, &path.join(&tree.node(*c).name), walk)?;
            }
            // What the reference tree does not have changes READDIR's results: say so.
            let names: Vec<&str> = children.iter().map(|c| tree.node(*c).name.as_str()).collect();
            let mut extra: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| err(path, e))?
                .flatten()
                .filter(|e| !names.iter().any(|n| e.file_name() == **n))
                .map(|e| e.path())
                .collect();
            extra.sort();
            walk.extra.extend(extra);
        }
    }
    Ok(())
}

pub fn run(args: ExportTreeArgs) -> Outcome {
    let tree = Tree::new();
    let mut walk = Walk { counts: [0; 3], extra: Vec::new() };
    write_node(&tree, tree.root(), &args.dir, &mut walk).map_err(HarnessError::Environment)?;
    for p in &walk.extra {
        crate::errln!(
            "warning: {} is not in the reference tree (left in place; it changes what READDIR returns)",
            p.display()
        );
    }
    let [created, replaced, unchanged] = walk.counts;
    outln!(
        "{}: {created} created, {replaced} replaced, {unchanged} unchanged, {} not in the reference tree",
        args.dir.display(),
        walk.extra.len()
    );
    Ok(Ending::AsExpected)
}
