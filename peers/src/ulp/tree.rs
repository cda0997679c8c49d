//! The in-memory file tree the reference NFSv3 server exports. Everything is deterministic, so
//! scenarios and tests can compute expected handles, attributes and file contents.
//!
//! Layout (fileids in construction order, root = 1):
//!
//! ```text
//! /             dir
//!   empty       file, 0 bytes
//!   one         file, 1 byte
//!   five        file, 5 bytes
//!   page-minus-1 file, 4095 bytes
//!   page-plus-1 file, 4097 bytes
//!   big         file, 70000 bytes
//!   scratch     file, 0 bytes (a target for WRITE scenarios)
//!   link        symlink -> "five"
//!   longlink    symlink -> longlink_target() (1500 bytes)
//!   dir/        dir with DIR_ENTRIES files dir_entry_name(i), file i being i bytes long
//! ```
//!
//! File contents: byte `i` of a file created with `len` bytes is `(i * 7 + len) % 251`
//! ([`content_byte`](crate::proto::nfs3::content_byte)); WRITE and SETATTR's size change the in-memory copy.
//!
//! CREATE appends a new empty file to its directory (so READDIR cookies of existing entries
//! stay valid) and gives it the next fileid; the tree holds at most [`MAX_NODES`] objects.
//!
//! Handles: the root is [`ROOT_FH`] (the Linux fsid=1 export root handle). Every other
//! object has a 16-byte handle `01 00 01 01 | 01 00 00 00 | fileid (u32 LE) | 01 00 00 00`
//! (Linux's FILEID_INO32_GEN shape with generation 1). A handle of another length is
//! NFS3ERR_BADHANDLE; one of the right length that names nothing is NFS3ERR_STALE.

use crate::proto::nfs3::{
    file_contents, NFS3ERR_BADHANDLE, NFS3ERR_EXIST, NFS3ERR_FBIG, NFS3ERR_INVAL, NFS3ERR_ISDIR, NFS3ERR_NAMETOOLONG,
    NFS3ERR_NOENT, NFS3ERR_NOSPC, NFS3ERR_NOTDIR, NFS3ERR_STALE, ROOT_FH,
};
/// Prefix of every non-root handle.
pub const HANDLE_PREFIX: [u8; 8] = [0x01, 0x00, 0x01, 0x01, 0x01, 0x00, 0x00, 0x00];
/// Generation word ending every non-root handle (little-endian 1).
pub const HANDLE_GENERATION: [u8; 4] = [0x01, 0x00, 0x00, 0x00];
/// fsid of every object (fattr3 fsid).
pub const FSID: u64 = 1;
/// atime, mtime and ctime of every object (seconds, nanoseconds); never changes.
pub const TIME: (u32, u32) = (1_700_000_000, 0);
/// The regular files in the root, with their initial sizes.
pub const FILES: [(&str, usize); 7] = [
    ("empty", 0),
    ("one", 1),
    ("five", 5),
    ("page-minus-1", 4095),
    ("page-plus-1", 4097),
    ("big", 70000),
    ("scratch", 0),
];
/// Target of the symlink `link`.
pub const LINK_TARGET: &[u8] = b"five";
/// Length of the target of the symlink `longlink`.
pub const LONGLINK_LEN: usize = 1500;
/// Number of entries in `dir`.
pub const DIR_ENTRIES: usize = 20;
/// Largest size WRITE may grow a file to; beyond it NFS3ERR_FBIG.
pub const MAX_FILE_SIZE: u64 = 16 << 20;
/// Size and space used reported for a directory.
pub const DIR_SIZE: u64 = 4096;
/// Most objects the tree holds (FSSTAT tfiles); CREATE beyond it is NFS3ERR_NOSPC.
pub const MAX_NODES: usize = 4096;
/// Total size of the file system (FSSTAT tbytes).
pub const TOTAL_BYTES: u64 = 1 << 30;
/// Longest name a directory entry may have (PATHCONF name_max).
pub const NAME_MAX: usize = 255;

/// The target of `longlink`: "abcdefghijklmno/" repeated, cut at [`LONGLINK_LEN`] bytes
/// (no component over 15 bytes, so a real server can hold the same link).
pub fn longlink_target() -> Vec<u8> {
    (0..LONGLINK_LEN).map(|i| if i % 16 == 15 { b'/' } else { b'a' + (i % 16) as u8 }).collect()
}

/// Name of entry `i` of `dir` ("entry-07-of-twenty-in-dir": 25 bytes, so 20 entries
/// need more than 1 KiB of READDIR results).
pub fn dir_entry_name(i: usize) -> String {
    format!("entry-{i:02}-of-twenty-in-dir")
}

/// The handle of the object with `fileid` (1 is the root).
pub fn handle_for(fileid: u64) -> Vec<u8> {
    if fileid == 1 {
        return ROOT_FH.to_vec();
    }
    let mut h = HANDLE_PREFIX.to_vec();
    h.extend_from_slice(&(fileid as u32).to_le_bytes());
    h.extend_from_slice(&HANDLE_GENERATION);
    h
}

/// ftype3 (RFC 1813 2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ftype {
    Reg = 1,
    Dir = 2,
    Lnk = 5,
}

/// What an object holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    File(Vec<u8>),
    /// Children in READDIR order.
    Dir(Vec<NodeId>),
    Symlink(Vec<u8>),
}

/// Index of a node in the tree; its fileid is `index + 1`.
pub type NodeId = usize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub parent: NodeId,
    pub kind: Kind,
    /// The verifier of an EXCLUSIVE CREATE that made this file (RFC 1813 3.3.8).
    pub create_verf: Option<[u8; 8]>,
}

/// fattr3 (RFC 1813 2.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fattr3 {
    pub ftype: Ftype,
    pub mode: u32,
    pub nlink: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u64,
    pub used: u64,
    pub rdev: (u32, u32),
    pub fsid: u64,
    pub fileid: u64,
    pub atime: (u32, u32),
    pub mtime: (u32, u32),
    pub ctime: (u32, u32),
}

/// The exported tree. Errors are NFSv3 status codes.
#[derive(Debug, Clone)]
pub struct Tree {
    nodes: Vec<Node>,
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

impl Tree {
    /// The standard tree described in the module documentation.
    pub fn new() -> Self {
        let mut t = Tree {
            nodes: vec![Node { name: String::new(), parent: 0, kind: Kind::Dir(Vec::new()), create_verf: None }],
        };
        for (name, len) in FILES {
            t.add(0, name, Kind::File(file_contents(len)));
        }
        t.add(0, "link", Kind::Symlink(LINK_TARGET.to_vec()));
        t.add(0, "longlink", Kind::Symlink(longlink_target()));
        let dir = t.add(0, "dir", Kind::Dir(Vec::new()));
        for i in 0..DIR_ENTRIES {
            t.add(dir, &dir_entry_name(i), Kind::File(file_contents(i)));
        }
        t
    }

    fn add(&mut self, parent: NodeId, name: &str, kind: Kind) -> NodeId {
        let id = self.nodes.len();
        self.nodes.push(Node { name: name.to_string(), parent, kind, create_verf: None });
        if let Kind::Dir(children) = &mut self.nodes[parent].kind {
            children.push(id);
        }
        id
    }

    pub fn root(&self) -> NodeId {
        0
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn fileid(&self, id: NodeId) -> u64 {
        id as u64 + 1
    }

    pub fn handle(&self, id: NodeId) -> Vec<u8> {
        handle_for(self.fileid(id))
    }

    /// The node a path from the root names ("" or "/" is the root; "dir/entry-00-...").
    pub fn lookup_path(&self, path: &str) -> Option<NodeId> {
        let mut at = self.root();
        for c in path.split('/').filter(|c| !c.is_empty()) {
            at = self.lookup(at, c.as_bytes()).ok()?;
        }
        Some(at)
    }

    /// The handle of the object at `path`.
    pub fn handle_of(&self, path: &str) -> Option<Vec<u8>> {
        self.lookup_path(path).map(|id| self.handle(id))
    }

    /// The node a file handle names (RFC 1813 2.3.3, 2.6: BADHANDLE vs STALE).
    pub fn resolve(&self, fh: &[u8]) -> Result<NodeId, u32> {
        match fh.len() {
            8 if fh == ROOT_FH => Ok(self.root()),
            8 => Err(NFS3ERR_STALE),
            16 => {
                if fh[..8] != HANDLE_PREFIX || fh[12..] != HANDLE_GENERATION {
                    return Err(NFS3ERR_STALE);
                }
                let fileid = u32::from_le_bytes([fh[8], fh[9], fh[10], fh[11]]) as usize;
                if fileid < 2 || fileid > self.nodes.len() {
                    return Err(NFS3ERR_STALE);
                }
                Ok(fileid - 1)
            }
            _ => Err(NFS3ERR_BADHANDLE),
        }
    }

    /// LOOKUP of `name` in `dir` (RFC 1813 3.3.3); "." and ".." are understood.
    pub fn lookup(&self, dir: NodeId, name: &[u8]) -> Result<NodeId, u32> {
        let Kind::Dir(children) = &self.nodes[dir].kind else {
            return Err(NFS3ERR_NOTDIR);
        };
        if name.len() > NAME_MAX {
            return Err(NFS3ERR_NAMETOOLONG);
        }
        match name {
            b"." => return Ok(dir),
            b".." => return Ok(self.nodes[dir].parent),
            _ => {}
        }
        children.iter().copied().find(|&c| self.nodes[c].name.as_bytes() == name).ok_or(NFS3ERR_NOENT)
    }

    /// The children of a directory, in READDIR order.
    pub fn children(&self, dir: NodeId) -> Result<&[NodeId], u32> {
        match &self.nodes[dir].kind {
            Kind::Dir(c) => Ok(c),
            _ => Err(NFS3ERR_NOTDIR),
        }
    }

    pub fn attrs(&self, id: NodeId) -> Fattr3 {
        let (ftype, mode, nlink, size, used) = match &self.nodes[id].kind {
            Kind::File(d) => (Ftype::Reg, 0o644, 1, d.len() as u64, (d.len() as u64).div_ceil(4096) * 4096),
            Kind::Symlink(t) => (Ftype::Lnk, 0o777, 1, t.len() as u64, t.len() as u64),
            Kind::Dir(c) => {
                let subdirs = c.iter().filter(|&&x| matches!(self.nodes[x].kind, Kind::Dir(_))).count();
                (Ftype::Dir, 0o755, 2 + subdirs as u32, DIR_SIZE, DIR_SIZE)
            }
        };
        Fattr3 {
            ftype,
            mode,
            nlink,
            uid: 0,
            gid: 0,
            size,
            used,
            rdev: (0, 0),
            fsid: FSID,
            fileid: self.fileid(id),
            atime: TIME,
            mtime: TIME,
            ctime: TIME,
        }
    }

    /// READ (RFC 1813 3.3.6): up to `count` bytes from `offset`, and whether they end the file.
    pub fn read(&self, id: NodeId, offset: u64, count: u32) -> Result<(&[u8], bool), u32> {
        let data = match &self.nodes[id].kind {
            Kind::File(d) => d,
            Kind::Dir(_) => return Err(NFS3ERR_ISDIR),
            Kind::Symlink(_) => return Err(NFS3ERR_INVAL),
        };
        let len = data.len() as u64;
        let start = offset.min(len);
        let end = offset.saturating_add(count as u64).min(len);
        Ok((&data[start as usize..end as usize], end >= len))
    }

    /// WRITE (RFC 1813 3.3.7): writes `data` at `offset`, growing the file (with zeros in any
    /// hole) as needed.
    pub fn write(&mut self, id: NodeId, offset: u64, data: &[u8]) -> Result<(), u32> {
        let file = match &mut self.nodes[id].kind {
            Kind::File(d) => d,
            Kind::Dir(_) => return Err(NFS3ERR_ISDIR),
            Kind::Symlink(_) => return Err(NFS3ERR_INVAL),
        };
        let end = offset.checked_add(data.len() as u64).ok_or(NFS3ERR_FBIG)?;
        if end > MAX_FILE_SIZE {
            return Err(NFS3ERR_FBIG);
        }
        if data.is_empty() {
            return Ok(());
        }
        if (file.len() as u64) < end {
            file.resize(end as usize, 0);
        }
        file[offset as usize..end as usize].copy_from_slice(data);
        Ok(())
    }

    /// READLINK (RFC 1813 3.3.5).
    pub fn readlink(&self, id: NodeId) -> Result<&[u8], u32> {
        match &self.nodes[id].kind {
            Kind::Symlink(t) => Ok(t),
            _ => Err(NFS3ERR_INVAL),
        }
    }

    /// Number of objects in the tree.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree is empty (never: it always has its root).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Bytes used by all objects (the sum of their fattr3 `used`).
    pub fn used_bytes(&self) -> u64 {
        (0..self.nodes.len()).map(|id| self.attrs(id).used).sum()
    }

    /// CREATE of a regular file `name` in `dir` (RFC 1813 3.3.8). Returns the file and whether
    /// it already existed; `exclusive` (GUARDED or EXCLUSIVE) makes an existing name
    /// NFS3ERR_EXIST, except an EXCLUSIVE retry whose verifier `verf` matches the one that
    /// created the file. A name that is empty, "." or "..", or holds '/' or NUL is
    /// NFS3ERR_INVAL.
    pub fn create(
        &mut self,
        dir: NodeId,
        name: &[u8],
        exclusive: bool,
        verf: Option<[u8; 8]>,
    ) -> Result<(NodeId, bool), u32> {
        match self.lookup(dir, name) {
            Ok(id) => {
                if matches!(self.nodes[id].kind, Kind::File(_))
                    && (!exclusive || (verf.is_some() && self.nodes[id].create_verf == verf))
                {
                    return Ok((id, true));
                }
                return Err(NFS3ERR_EXIST);
            }
            Err(NFS3ERR_NOENT) => {}
            Err(s) => return Err(s),
        }
        if name.is_empty() || name.contains(&b'/') || name.contains(&0) {
            return Err(NFS3ERR_INVAL);
        }
        let Ok(name) = std::str::from_utf8(name) else {
            return Err(NFS3ERR_INVAL);
        };
        if self.nodes.len() >= MAX_NODES {
            return Err(NFS3ERR_NOSPC);
        }
        let id = self.add(dir, name, Kind::File(Vec::new()));
        self.nodes[id].create_verf = verf;
        Ok((id, false))
    }

    /// SETATTR's size (RFC 1813 3.3.2): truncates or extends (with zeros) a regular file.
    pub fn set_size(&mut self, id: NodeId, size: u64) -> Result<(), u32> {
        let file = match &mut self.nodes[id].kind {
            Kind::File(d) => d,
            Kind::Dir(_) => return Err(NFS3ERR_ISDIR),
            Kind::Symlink(_) => return Err(NFS3ERR_INVAL),
        };
        if size > MAX_FILE_SIZE {
            return Err(NFS3ERR_FBIG);
        }
        file.resize(size as usize, 0);
        Ok(())
    }
}
