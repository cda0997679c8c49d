//! The reference NFSv3 server, driven with hand-encoded arguments; results are decoded word
//! by word following RFC 1813's XDR, and expected values come from the tree's documented
//! layout and contents.

use rpcrdma_peers::proto::nfs3::{content_byte, file_contents, ROOT_FH};
use rpcrdma_peers::ulp::tree::{self, dir_entry_name, longlink_target};
use rpcrdma_peers::ulp::{Nfs3Server, NullServer, UlpOutcome, UlpResults, UpperLayer};

const NFS: u32 = 100003;
const GETATTR: u32 = 1;
const LOOKUP: u32 = 3;
const READLINK: u32 = 5;
const READ: u32 = 6;
const WRITE: u32 = 7;
const READDIR: u32 = 16;
// RFC 1813 3 (procedure numbers of the NFS_V3 program).
const SETATTR: u32 = 2;
const ACCESS: u32 = 4;
const CREATE: u32 = 8;
const MKDIR: u32 = 9;
const READDIRPLUS: u32 = 17;
const FSSTAT: u32 = 18;
const FSINFO: u32 = 19;
const PATHCONF: u32 = 20;
const COMMIT: u32 = 21;

// ---- argument encoding (RFC 1813 XDR, by hand) ----

#[derive(Default)]
struct Args(Vec<u8>);

impl Args {
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_be_bytes());
        self
    }
    fn opaque(mut self, d: &[u8]) -> Self {
        self = self.u32(d.len() as u32);
        self.0.extend_from_slice(d);
        while self.0.len() & 3 != 0 {
            self.0.push(0);
        }
        self
    }
    fn fixed(mut self, d: &[u8]) -> Self {
        self.0.extend_from_slice(d);
        self
    }
}

// ---- result decoding ----

struct Dec<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Dec<'a> {
    fn new(b: &'a [u8]) -> Self {
        Dec { b, at: 0 }
    }
    fn u32(&mut self) -> u32 {
        let v = u32::from_be_bytes(self.b[self.at..self.at + 4].try_into().unwrap());
        self.at += 4;
        v
    }
    fn u64(&mut self) -> u64 {
        ((self.u32() as u64) << 32) | self.u32() as u64
    }
    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        s
    }
    fn opaque(&mut self) -> &'a [u8] {
        let n = self.u32() as usize;
        let d = self.bytes(n);
        let pad = (4 - n % 4) % 4;
        assert!(self.bytes(pad).iter().all(|&b| b == 0), "XDR pad must be zero");
        d
    }
    fn done(&self) {
        assert_eq!(self.at, self.b.len(), "trailing result bytes");
    }
}

/// fattr3 fields we check.
#[derive(Debug)]
struct Attr {
    ftype: u32,
    mode: u32,
    nlink: u32,
    uid: u32,
    gid: u32,
    size: u64,
    used: u64,
    fsid: u64,
    fileid: u64,
}

/// fattr3: type, mode, nlink, uid, gid, size, used, rdev (2 words), fsid, fileid, 3 nfstime3.
fn fattr(d: &mut Dec<'_>) -> Attr {
    let (ftype, mode, nlink, uid, gid) = (d.u32(), d.u32(), d.u32(), d.u32(), d.u32());
    let (size, used) = (d.u64(), d.u64());
    assert_eq!((d.u32(), d.u32()), (0, 0), "rdev");
    let (fsid, fileid) = (d.u64(), d.u64());
    for _ in 0..3 {
        let (_s, ns) = (d.u32(), d.u32());
        assert!(ns < 1_000_000_000);
    }
    Attr { ftype, mode, nlink, uid, gid, size, used, fsid, fileid }
}

fn post_op(d: &mut Dec<'_>) -> Option<Attr> {
    match d.u32() {
        0 => None,
        1 => Some(fattr(d)),
        v => panic!("attributes_follow = {v}"),
    }
}

fn success(o: UlpOutcome) -> UlpResults {
    match o {
        UlpOutcome::Success(r) => r,
        other => panic!("expected SUCCESS, got {other:?}"),
    }
}

fn call(s: &mut Nfs3Server, proc_: u32, args: Args) -> UlpResults {
    success(s.call(NFS, 3, proc_, &args.0))
}

fn lookup(s: &mut Nfs3Server, dir: &[u8], name: &str) -> (u32, Option<Vec<u8>>, Option<Attr>) {
    let r = call(s, LOOKUP, Args::default().opaque(dir).opaque(name.as_bytes()));
    assert!(r.ddp.is_none() && r.tail.is_empty());
    let mut d = Dec::new(&r.head);
    let status = d.u32();
    if status != 0 {
        post_op(&mut d);
        d.done();
        return (status, None, None);
    }
    let fh = d.opaque().to_vec();
    let obj = post_op(&mut d).expect("obj_attributes");
    let dir_attr = post_op(&mut d).expect("dir_attributes");
    assert_eq!(dir_attr.ftype, 2);
    d.done();
    (status, Some(fh), Some(obj))
}

fn fh_of(s: &mut Nfs3Server, name: &str) -> Vec<u8> {
    let (st, fh, _) = lookup(s, &ROOT_FH, name);
    assert_eq!(st, 0, "LOOKUP {name}");
    fh.unwrap()
}

#[derive(Debug)]
struct ReadOk {
    count: u32,
    eof: bool,
    data: Vec<u8>,
    results: UlpResults,
}

fn read(s: &mut Nfs3Server, fh: &[u8], offset: u64, count: u32) -> Result<ReadOk, u32> {
    let r = call(s, READ, Args::default().opaque(fh).u64(offset).u32(count));
    let mut d = Dec::new(&r.head);
    let status = d.u32();
    if status != 0 {
        post_op(&mut d);
        d.done();
        assert!(r.ddp.is_none());
        return Err(status);
    }
    // READ3resok: file_attributes, count, eof, data<> whose length word ends the head.
    post_op(&mut d).expect("file_attributes");
    let count = d.u32();
    let eof = match d.u32() {
        0 => false,
        1 => true,
        v => panic!("eof = {v}"),
    };
    let len = d.u32();
    d.done();
    let data = r.ddp.clone().expect("READ data is the DDP item");
    assert_eq!(len as usize, data.len());
    assert_eq!(count, len);
    assert!(r.tail.is_empty());
    // The unreduced stream decodes the same.
    let whole = r.inline();
    let mut w = Dec::new(&whole);
    w.u32();
    post_op(&mut w);
    w.u32();
    w.u32();
    assert_eq!(w.opaque(), &data[..]);
    w.done();
    Ok(ReadOk { count, eof, data, results: r })
}

fn expected(len: usize) -> Vec<u8> {
    (0..len).map(|i| ((i * 7 + len) % 251) as u8).collect()
}

#[test]
fn documented_contents_formula() {
    assert_eq!(file_contents(5), expected(5));
    assert_eq!(content_byte(70000, 69999), ((69999 * 7 + 70000) % 251) as u8);
    assert_eq!(longlink_target().len(), 1500);
}

#[test]
fn null_procedure() {
    let mut s = Nfs3Server::new();
    let r = success(s.call(NFS, 3, 0, &[]));
    assert_eq!(r, UlpResults::default());
    assert_eq!(r.inline_len(), 0);
    let mut n = NullServer;
    assert_eq!(n.call(100005, 1, 0, &[]), UlpOutcome::Success(UlpResults::default()));
    assert_eq!(n.call(NFS, 3, 1, &[]), UlpOutcome::ProcUnavail);
}

#[test]
fn getattr_root() {
    let mut s = Nfs3Server::new();
    let r = call(&mut s, GETATTR, Args::default().opaque(&ROOT_FH));
    assert!(r.ddp.is_none() && r.tail.is_empty());
    let mut d = Dec::new(&r.head);
    assert_eq!(d.u32(), 0);
    let a = fattr(&mut d);
    d.done();
    assert_eq!(r.head.len(), 4 + 84);
    assert_eq!(a.ftype, 2, "NF3DIR");
    assert_eq!(a.mode & 0o777, 0o755);
    assert!(a.nlink >= 2);
    assert_eq!((a.uid, a.gid, a.fsid), (0, 0, 1));
    assert_eq!(a.fileid, 1);
}

#[test]
fn lookup_each_file() {
    let mut s = Nfs3Server::new();
    for (name, size) in [
        ("empty", 0u64),
        ("one", 1),
        ("five", 5),
        ("page-minus-1", 4095),
        ("page-plus-1", 4097),
        ("big", 70000),
        ("scratch", 0),
    ] {
        let (st, fh, a) = lookup(&mut s, &ROOT_FH, name);
        assert_eq!(st, 0, "{name}");
        let fh = fh.unwrap();
        assert!((8..=16).contains(&fh.len()), "{name}: handle of {} bytes", fh.len());
        let a = a.unwrap();
        assert_eq!(a.ftype, 1, "{name}: NF3REG");
        assert_eq!(a.size, size, "{name}");
        assert!(a.used >= size);
        assert_eq!(a.nlink, 1);
        // GETATTR through the returned handle agrees.
        let r = call(&mut s, GETATTR, Args::default().opaque(&fh));
        let mut d = Dec::new(&r.head);
        assert_eq!(d.u32(), 0);
        let g = fattr(&mut d);
        assert_eq!((g.size, g.fileid), (size, a.fileid));
        // Deterministic: a second server hands out the same handle.
        assert_eq!(Nfs3Server::new().tree().lock().unwrap().handle_of(name), Some(fh));
    }
    let (_, _, dir) = lookup(&mut s, &ROOT_FH, "dir");
    assert_eq!(dir.unwrap().ftype, 2);
    let (_, _, link) = lookup(&mut s, &ROOT_FH, "link");
    let link = link.unwrap();
    assert_eq!((link.ftype, link.size), (5, 4));
    assert_eq!(lookup(&mut s, &ROOT_FH, "missing").0, 2, "NFS3ERR_NOENT");
    let five = fh_of(&mut s, "five");
    assert_eq!(lookup(&mut s, &five, "x").0, 20, "NFS3ERR_NOTDIR");
}

#[test]
fn read_five() {
    let mut s = Nfs3Server::new();
    let fh = fh_of(&mut s, "five");
    let r = read(&mut s, &fh, 0, 1024).unwrap();
    assert_eq!(r.count, 5);
    assert!(r.eof);
    assert_eq!(r.data, expected(5));
    let res = &r.results;
    // head: status, post_op_attr (4 + 84), count, eof, then the data's length word 5.
    assert_eq!(res.head.len(), 4 + 4 + 84 + 4 + 4 + 4);
    assert_eq!(&res.head[res.head.len() - 4..], &[0, 0, 0, 5]);
    assert_eq!(res.ddp.as_deref(), Some(&expected(5)[..]));
    assert!(res.tail.is_empty());
    let inline = res.inline();
    assert_eq!(inline.len(), res.head.len() + 8);
    assert_eq!(res.inline_len(), inline.len());
    assert_eq!(&inline[res.head.len()..], &[expected(5), vec![0, 0, 0]].concat()[..]);
}

#[test]
fn read_small_files_and_short_counts() {
    let mut s = Nfs3Server::new();
    let fh = fh_of(&mut s, "empty");
    let r = read(&mut s, &fh, 0, 100).unwrap();
    assert_eq!((r.count, r.eof), (0, true));
    assert_eq!(r.results.ddp, Some(Vec::new()));
    let fh = fh_of(&mut s, "page-plus-1");
    let r = read(&mut s, &fh, 0, 4096).unwrap();
    assert_eq!((r.count, r.eof), (4096, false));
    assert_eq!(r.data, expected(4097)[..4096]);
    let r = read(&mut s, &fh, 4096, 4096).unwrap();
    assert_eq!((r.count, r.eof), (1, true));
    assert_eq!(r.data, [content_byte(4097, 4096)]);
    assert_eq!(r.results.inline_len(), r.results.head.len() + 4);
    let fh = fh_of(&mut s, "page-minus-1");
    let r = read(&mut s, &fh, 0, 4095).unwrap();
    assert_eq!((r.count, r.eof), (4095, true), "a read ending exactly at EOF sets eof");
}

#[test]
fn read_past_eof() {
    let mut s = Nfs3Server::new();
    let fh = fh_of(&mut s, "five");
    for offset in [5u64, 6, 1 << 40, u64::MAX] {
        let r = read(&mut s, &fh, offset, 10).unwrap();
        assert_eq!((r.count, r.eof), (0, true), "offset {offset}");
        assert!(r.data.is_empty());
    }
}

#[test]
fn read_big_in_three_pieces() {
    let mut s = Nfs3Server::new();
    let fh = fh_of(&mut s, "big");
    let mut got = Vec::new();
    let pieces = [(0u64, 32768u32, false), (32768, 32768, false), (65536, 32768, true)];
    for (off, count, eof) in pieces {
        let r = read(&mut s, &fh, off, count).unwrap();
        assert_eq!(r.eof, eof, "piece at {off}");
        got.extend_from_slice(&r.data);
    }
    assert_eq!(got.len(), 70000);
    assert_eq!(got, expected(70000));
}

#[test]
fn write_then_read_back() {
    let mut s = Nfs3Server::new();
    let fh = fh_of(&mut s, "page-minus-1");
    let data: Vec<u8> = (0..10u8).map(|i| 0xa0 + i).collect();
    // WRITE3args: file, offset, count, stable (UNSTABLE), data<>.
    let r = call(&mut s, WRITE, Args::default().opaque(&fh).u64(4090).u32(10).u32(0).opaque(&data));
    assert!(r.ddp.is_none() && r.tail.is_empty());
    let mut d = Dec::new(&r.head);
    assert_eq!(d.u32(), 0);
    // wcc_data: pre_op_attr (size, mtime, ctime), post_op_attr.
    assert_eq!(d.u32(), 1);
    assert_eq!(d.u64(), 4095, "size before");
    d.bytes(16);
    let after = post_op(&mut d).expect("after");
    assert_eq!(after.size, 4100);
    assert_eq!(d.u32(), 10, "count");
    assert_eq!(d.u32(), 2, "committed FILE_SYNC");
    let verf = d.bytes(8).to_vec();
    d.done();
    let r = read(&mut s, &fh, 4085, 100).unwrap();
    assert!(r.eof);
    let mut want = expected(4095)[4085..4090].to_vec();
    want.extend_from_slice(&data);
    assert_eq!(r.data, want);
    // Same verifier on the next write.
    let r = call(&mut s, WRITE, Args::default().opaque(&fh).u64(0).u32(1).u32(2).opaque(&[7]));
    assert_eq!(&r.head[r.head.len() - 8..], &verf[..]);
    assert_eq!(read(&mut s, &fh, 0, 1).unwrap().data, [7]);
    // WRITE to a directory: NFS3ERR_ISDIR with wcc_data.
    let dir = fh_of(&mut s, "dir");
    let r = call(&mut s, WRITE, Args::default().opaque(&dir).u64(0).u32(1).u32(2).opaque(&[7]));
    assert_eq!(Dec::new(&r.head).u32(), 21);
    // An unknown stable_how does not decode.
    let o = s.call(NFS, 3, WRITE, &Args::default().opaque(&fh).u64(0).u32(1).u32(3).opaque(&[7]).0);
    assert_eq!(o, UlpOutcome::GarbageArgs);
}

/// Names, cookies, cookieverf, eof and READDIR3resok length of one READDIR reply.
type Listing = (Vec<String>, Vec<u64>, Vec<u8>, bool, usize);

/// READDIR3args: dir, cookie, cookieverf, count.
fn readdir(s: &mut Nfs3Server, fh: &[u8], cookie: u64, verf: &[u8], count: u32) -> Result<Listing, u32> {
    let r = call(s, READDIR, Args::default().opaque(fh).u64(cookie).fixed(verf).u32(count));
    assert!(r.ddp.is_none() && r.tail.is_empty());
    let mut d = Dec::new(&r.head);
    let status = d.u32();
    if status != 0 {
        post_op(&mut d);
        d.done();
        return Err(status);
    }
    assert_eq!(post_op(&mut d).expect("dir_attributes").ftype, 2);
    let verf = d.bytes(8).to_vec();
    let (mut names, mut cookies) = (Vec::new(), Vec::new());
    // dirlist3: entry3 *entries (an XDR optional-data list), bool eof.
    while d.u32() == 1 {
        let _fileid = d.u64();
        names.push(String::from_utf8(d.opaque().to_vec()).unwrap());
        cookies.push(d.u64());
    }
    let eof = d.u32() == 1;
    d.done();
    Ok((names, cookies, verf, eof, r.head.len() - 4))
}

#[test]
fn readdir_with_cookie_continuation() {
    let mut s = Nfs3Server::new();
    let dir = fh_of(&mut s, "dir");
    let want: Vec<String> = (0..20).map(dir_entry_name).collect();

    // One large request: all 20 entries, more than 1 KiB.
    let (names, _, _, eof, len) = readdir(&mut s, &dir, 0, &[0; 8], 8192).unwrap();
    assert_eq!(names, want);
    assert!(eof);
    assert!(len > 1024, "READDIR of dir is {len} bytes");

    // 512-byte pieces, each continuing at the last cookie.
    let (mut cookie, mut verf) = (0u64, vec![0u8; 8]);
    let mut got = Vec::new();
    let mut rounds = 0;
    loop {
        let (names, cookies, v, eof, len) = readdir(&mut s, &dir, cookie, &verf, 512).unwrap();
        assert!(len <= 512, "READDIR3resok of {len} bytes exceeds count");
        assert!(!names.is_empty());
        got.extend(names);
        cookie = *cookies.last().unwrap();
        verf = v;
        rounds += 1;
        if eof {
            break;
        }
        assert!(rounds < 20);
    }
    assert!(rounds > 1);
    assert_eq!(got, want);

    // Root listing contains the files.
    let (names, _, _, eof, _) = readdir(&mut s, &ROOT_FH, 0, &[0; 8], 4096).unwrap();
    assert!(eof);
    for n in ["empty", "one", "five", "page-minus-1", "page-plus-1", "big", "scratch", "dir", "link", "longlink"] {
        assert!(names.iter().any(|x| x == n), "{n}");
    }
    // A count too small for any entry: NFS3ERR_TOOSMALL (10005); READDIR of a file: NOTDIR.
    assert_eq!(readdir(&mut s, &dir, 0, &[0; 8], 100).unwrap_err(), 10005);
    let five = fh_of(&mut s, "five");
    assert_eq!(readdir(&mut s, &five, 0, &[0; 8], 4096).unwrap_err(), 20);
}

fn readlink(s: &mut Nfs3Server, fh: &[u8]) -> Result<UlpResults, u32> {
    let r = call(s, READLINK, Args::default().opaque(fh));
    let mut d = Dec::new(&r.head);
    let status = d.u32();
    if status != 0 {
        post_op(&mut d);
        d.done();
        return Err(status);
    }
    // READLINK3resok: symlink_attributes, nfspath3 data; the head ends with its length word.
    assert_eq!(post_op(&mut d).expect("symlink_attributes").ftype, 5);
    let len = d.u32() as usize;
    d.done();
    assert_eq!(r.ddp.as_ref().map(|p| p.len()), Some(len));
    assert!(r.tail.is_empty());
    Ok(r)
}

#[test]
fn readlink_link_and_longlink() {
    let mut s = Nfs3Server::new();
    let fh = fh_of(&mut s, "link");
    let r = readlink(&mut s, &fh).unwrap();
    assert_eq!(r.ddp.as_deref(), Some(&b"five"[..]));
    assert_eq!(&r.head[r.head.len() - 4..], &[0, 0, 0, 4]);
    assert_eq!(r.inline_len(), r.head.len() + 4);

    let fh = fh_of(&mut s, "longlink");
    let r = readlink(&mut s, &fh).unwrap();
    let path = r.ddp.clone().unwrap();
    assert_eq!(path.len(), 1500);
    // Documented target: "abcdefghijklmno/" repeated.
    let want: Vec<u8> = b"abcdefghijklmno/".iter().copied().cycle().take(1500).collect();
    assert_eq!(path, want);
    assert_eq!(r.inline_len(), r.head.len() + 1500);

    // READLINK of a regular file: NFS3ERR_INVAL.
    let five = fh_of(&mut s, "five");
    assert_eq!(readlink(&mut s, &five).unwrap_err(), 22);
}

#[test]
fn rpc_level_errors() {
    let mut s = Nfs3Server::new();
    assert_eq!(
        s.call(NFS, 3, MKDIR, &Args::default().opaque(&ROOT_FH).opaque(b"d").0),
        UlpOutcome::ProcUnavail,
        "MKDIR"
    );
    assert_eq!(s.call(NFS, 3, 22, &[]), UlpOutcome::ProcUnavail);
    assert_eq!(s.call(NFS, 2, 0, &[]), UlpOutcome::ProgMismatch { low: 3, high: 3 });
    assert_eq!(s.call(NFS, 4, 1, &[]), UlpOutcome::ProgMismatch { low: 3, high: 3 });
    assert_eq!(s.call(100005, 3, 0, &[]), UlpOutcome::ProgUnavail);
    // Garbage: truncated handle, handle over NFS3_FHSIZE (64), READ missing its count.
    assert_eq!(s.call(NFS, 3, GETATTR, &[0, 0, 0, 8, 1, 0]), UlpOutcome::GarbageArgs);
    assert_eq!(s.call(NFS, 3, GETATTR, &Args::default().opaque(&[0; 65]).0), UlpOutcome::GarbageArgs);
    assert_eq!(s.call(NFS, 3, READ, &Args::default().opaque(&ROOT_FH).u64(0).0), UlpOutcome::GarbageArgs);
    assert_eq!(s.call(NFS, 3, LOOKUP, &Args::default().opaque(&ROOT_FH).u32(1000).0), UlpOutcome::GarbageArgs);
}

#[test]
fn stale_and_bad_handles() {
    let mut s = Nfs3Server::new();
    let getattr = |s: &mut Nfs3Server, fh: &[u8]| {
        let r = call(s, GETATTR, Args::default().opaque(fh));
        let mut d = Dec::new(&r.head);
        let st = d.u32();
        d.done();
        st
    };
    // A well-formed handle that names nothing: NFS3ERR_STALE (70).
    let mut fh = fh_of(&mut s, "five");
    fh[8] ^= 0x80;
    assert_eq!(getattr(&mut s, &fh), 70);
    assert_eq!(getattr(&mut s, &[9, 9, 9, 9, 9, 9, 9, 9]), 70);
    // Lengths no handle has: NFS3ERR_BADHANDLE (10001).
    assert_eq!(getattr(&mut s, &[]), 10001);
    assert_eq!(getattr(&mut s, &[1, 0, 1]), 10001);
    // READ through a stale handle: status, post_op_attr absent.
    assert_eq!(read(&mut s, &fh, 0, 1).unwrap_err(), 70);
    assert_eq!(readdir(&mut s, &fh, 0, &[0; 8], 4096).unwrap_err(), 70);
    let (st, _, _) = lookup(&mut s, &fh, "five");
    assert_eq!(st, 70);
}

#[test]
fn servers_share_a_tree() {
    let a = Nfs3Server::new();
    let mut b = Nfs3Server::shared(a.tree());
    let mut a = a;
    let fh = fh_of(&mut a, "one");
    call(&mut a, WRITE, Args::default().opaque(&fh).u64(0).u32(2).u32(2).opaque(&[1, 2]));
    assert_eq!(read(&mut b, &fh, 0, 10).unwrap().data, [1, 2]);
    // A fresh server starts from the documented contents.
    assert_eq!(read(&mut Nfs3Server::new(), &fh, 0, 10).unwrap().data, expected(1));
}

// ---- mount-time and file-creation procedures ----

/// The status and post_op_attr that start (and, on failure, are all of) most results.
fn status_attr(r: &UlpResults) -> (u32, Option<Attr>, Dec<'_>) {
    assert!(r.ddp.is_none() && r.tail.is_empty());
    let mut d = Dec::new(&r.head);
    let st = d.u32();
    let a = post_op(&mut d);
    (st, a, d)
}

/// wcc_data: pre_op_attr (size, mtime, ctime), post_op_attr. Returns the sizes.
fn wcc(d: &mut Dec<'_>) -> (Option<u64>, Option<Attr>) {
    let before = match d.u32() {
        0 => None,
        1 => {
            let size = d.u64();
            for _ in 0..4 {
                d.u32();
            }
            Some(size)
        }
        v => panic!("pre_op attributes_follow = {v}"),
    };
    (before, post_op(d))
}

/// sattr3: set_mode3, set_uid3, set_gid3, set_size3, set_atime, set_mtime.
fn sattr(a: Args, mode: Option<u32>, size: Option<u64>, time_how: u32) -> Args {
    let a = match mode {
        Some(m) => a.u32(1).u32(m),
        None => a.u32(0),
    };
    let a = a.u32(0).u32(0);
    let a = match size {
        Some(n) => a.u32(1).u64(n),
        None => a.u32(0),
    };
    let a = a.u32(time_how);
    let a = if time_how == 2 { a.u32(5).u32(0) } else { a };
    a.u32(0)
}

#[test]
fn fsinfo_root() {
    let mut s = Nfs3Server::new();
    let r = call(&mut s, FSINFO, Args::default().opaque(&ROOT_FH));
    let (st, attr, mut d) = status_attr(&r);
    assert_eq!(st, 0);
    let attr = attr.expect("obj_attributes");
    assert_eq!((attr.ftype, attr.fileid), (2, 1));
    // rtmax, rtpref, rtmult, wtmax, wtpref, wtmult, dtpref.
    let words: Vec<u32> = (0..7).map(|_| d.u32()).collect();
    assert_eq!(words, [65536, 65536, 4096, 65536, 65536, 4096, 8192]);
    assert_eq!(d.u64(), 16 << 20, "maxfilesize");
    assert_eq!((d.u32(), d.u32()), (1, 0), "time_delta");
    // FSF3_SYMLINK (0x2) | FSF3_HOMOGENEOUS (0x8).
    assert_eq!(d.u32(), 0x0a, "properties");
    d.done();
    // The largest read fits in rtmax.
    const { assert!(65536 <= rpcrdma_peers::ulp::nfs3::MAX_READ) };

    // A stale handle: status and an absent post_op_attr only.
    let r = call(&mut s, FSINFO, Args::default().opaque(&[9; 8]));
    let (st, attr, d) = status_attr(&r);
    assert_eq!((st, attr.is_none()), (70, true));
    d.done();
}

#[test]
fn fsstat_root() {
    let mut s = Nfs3Server::new();
    let r = call(&mut s, FSSTAT, Args::default().opaque(&ROOT_FH));
    let (st, attr, mut d) = status_attr(&r);
    assert_eq!(st, 0);
    assert_eq!(attr.expect("obj_attributes").fileid, 1);
    // Space used: files rounded up to 4 KiB, symlinks their length, directories 4096.
    let page = |n: usize| (n as u64).div_ceil(4096) * 4096;
    let used: u64 =
        tree::FILES.iter().map(|&(_, n)| page(n)).sum::<u64>() + 4 + 1500 + 2 * 4096 + (0..20).map(page).sum::<u64>();
    assert_eq!(used, 181_728);
    let (tbytes, fbytes, abytes) = (d.u64(), d.u64(), d.u64());
    assert_eq!(tbytes, 1 << 30);
    assert_eq!((fbytes, abytes), (tbytes - used, tbytes - used));
    // Objects: root, 7 files, 2 symlinks, dir and its 20 entries.
    let (tfiles, ffiles, afiles) = (d.u64(), d.u64(), d.u64());
    assert_eq!((tfiles, ffiles, afiles), (4096, 4096 - 31, 4096 - 31));
    assert_eq!(d.u32(), 0, "invarsec");
    d.done();
}

#[test]
fn pathconf_root_and_file() {
    let mut s = Nfs3Server::new();
    let five = fh_of(&mut s, "five");
    for fh in [ROOT_FH.to_vec(), five] {
        let r = call(&mut s, PATHCONF, Args::default().opaque(&fh));
        let (st, attr, mut d) = status_attr(&r);
        assert_eq!(st, 0);
        assert!(attr.is_some());
        // linkmax, name_max, no_trunc, chown_restricted, case_insensitive, case_preserving.
        let words: Vec<u32> = (0..6).map(|_| d.u32()).collect();
        assert_eq!(words, [255, 255, 1, 1, 0, 1]);
        d.done();
    }
}

#[test]
fn access_by_type() {
    let mut s = Nfs3Server::new();
    let access = |s: &mut Nfs3Server, fh: &[u8], asked: u32| {
        let r = call(s, ACCESS, Args::default().opaque(fh).u32(asked));
        let (st, attr, mut d) = status_attr(&r);
        assert_eq!(st, 0);
        assert!(attr.is_some());
        let granted = d.u32();
        d.done();
        granted
    };
    // READ 0x1, LOOKUP 0x2, MODIFY 0x4, EXTEND 0x8, DELETE 0x10, EXECUTE 0x20.
    assert_eq!(access(&mut s, &ROOT_FH, 0x3f), 0x2f);
    let five = fh_of(&mut s, "five");
    assert_eq!(access(&mut s, &five, 0x3f), 0x0d);
    assert_eq!(access(&mut s, &five, 0x01), 0x01);
    assert_eq!(access(&mut s, &five, 0x22), 0);
    let link = fh_of(&mut s, "link");
    assert_eq!(access(&mut s, &link, 0x3f), 0x01);
    // Bits RFC 1813 does not define are never granted.
    assert_eq!(access(&mut s, &ROOT_FH, 0xffff_ffc0), 0);
}

/// CREATE3args: where (dir, name), createhow3. Returns the status, the new handle and its
/// size on success, and the directory's wcc_data presence.
fn create(s: &mut Nfs3Server, dir: &[u8], name: &[u8], how: Args) -> (u32, Option<(Vec<u8>, u64)>) {
    let a = Args::default().opaque(dir).opaque(name).fixed(&how.0);
    let r = call(s, CREATE, a);
    assert!(r.ddp.is_none() && r.tail.is_empty());
    let mut d = Dec::new(&r.head);
    let st = d.u32();
    let made = if st == 0 {
        // post_op_fh3, post_op_attr, dir_wcc.
        assert_eq!(d.u32(), 1, "handle_follows");
        let fh = d.opaque().to_vec();
        let attr = post_op(&mut d).expect("obj_attributes");
        assert_eq!(attr.ftype, 1);
        Some((fh, attr.size))
    } else {
        None
    };
    let (before, after) = wcc(&mut d);
    d.done();
    if st == 0 || st == 17 {
        assert!(before.is_some() && after.is_some(), "dir_wcc");
    }
    (st, made)
}

#[test]
fn create_write_setattr_commit() {
    let mut s = Nfs3Server::new();
    let unchecked = |size: Option<u64>| sattr(Args::default().u32(0), Some(0o644), size, 0);
    let guarded = sattr(Args::default().u32(1), None, None, 1);

    // A new file gets the next fileid (32: the tree holds 31 objects) and its handle.
    let (st, made) = create(&mut s, &ROOT_FH, b"newfile", unchecked(None));
    assert_eq!(st, 0);
    let (fh, size) = made.unwrap();
    assert_eq!(fh, tree::handle_for(32));
    assert_eq!(size, 0);
    assert_eq!(fh_of(&mut s, "newfile"), fh);
    // GUARDED on an existing name: NFS3ERR_EXIST; UNCHECKED: the same file.
    assert_eq!(create(&mut s, &ROOT_FH, b"newfile", guarded).0, 17);
    assert_eq!(create(&mut s, &ROOT_FH, b"newfile", unchecked(None)).1, Some((fh.clone(), 0)));

    // WRITE (UNSTABLE is committed FILE_SYNC), read back.
    let r = call(&mut s, WRITE, Args::default().opaque(&fh).u64(0).u32(3).u32(0).opaque(b"abc"));
    let mut d = Dec::new(&r.head);
    assert_eq!(d.u32(), 0);
    wcc(&mut d);
    assert_eq!((d.u32(), d.u32()), (3, 2), "count, committed FILE_SYNC");
    assert_eq!(d.bytes(8), b"WRITEVF1");
    d.done();
    assert_eq!(read(&mut s, &fh, 0, 10).unwrap().data, b"abc");

    // COMMIT3args: file, offset, count; COMMIT3resok: file_wcc, verf.
    let r = call(&mut s, COMMIT, Args::default().opaque(&fh).u64(0).u32(0));
    let mut d = Dec::new(&r.head);
    assert_eq!(d.u32(), 0);
    let (before, after) = wcc(&mut d);
    assert_eq!((before, after.map(|a| a.size)), (Some(3), Some(3)));
    assert_eq!(d.bytes(8), b"WRITEVF1", "the WRITE verifier");
    d.done();
    let r = call(&mut s, COMMIT, Args::default().opaque(&ROOT_FH).u64(0).u32(0));
    let mut d = Dec::new(&r.head);
    assert_eq!(d.u32(), 21, "COMMIT of a directory: NFS3ERR_ISDIR");
    wcc(&mut d);
    d.done();

    // SETATTR3args: object, sattr3, sattrguard3. Truncate to 2, then extend to 4 (zeros).
    let setattr = |s: &mut Nfs3Server, fh: &[u8], size: Option<u64>, guard: Option<(u32, u32)>| {
        let a = sattr(Args::default().opaque(fh), Some(0o600), size, 2);
        let a = match guard {
            Some((sec, ns)) => a.u32(1).u32(sec).u32(ns),
            None => a.u32(0),
        };
        let r = call(s, SETATTR, a);
        let mut d = Dec::new(&r.head);
        let st = d.u32();
        let (before, after) = wcc(&mut d);
        d.done();
        (st, before, after.map(|a| (a.size, a.mode)))
    };
    assert_eq!(setattr(&mut s, &fh, Some(2), None), (0, Some(3), Some((2, 0o644))), "size applied; mode is fixed");
    assert_eq!(read(&mut s, &fh, 0, 10).unwrap().data, b"ab");
    assert_eq!(setattr(&mut s, &fh, Some(4), Some(tree::TIME)), (0, Some(2), Some((4, 0o644))));
    assert_eq!(read(&mut s, &fh, 0, 10).unwrap().data, b"ab\0\0");
    // A guard with another ctime: NFS3ERR_NOT_SYNC, nothing changed.
    assert_eq!(setattr(&mut s, &fh, Some(0), Some((1, 0))).0, 10002);
    assert_eq!(read(&mut s, &fh, 0, 10).unwrap().data.len(), 4);
    // Sizes: of a directory NFS3ERR_ISDIR, beyond 16 MiB NFS3ERR_FBIG.
    assert_eq!(setattr(&mut s, &ROOT_FH, Some(0), None).0, 21);
    assert_eq!(setattr(&mut s, &fh, Some((16 << 20) + 1), None).0, 27);
    // No size: nothing to do.
    assert_eq!(setattr(&mut s, &fh, None, None).0, 0);
    // UNCHECKED with a size truncates the existing file.
    assert_eq!(create(&mut s, &ROOT_FH, b"newfile", unchecked(Some(0))).1, Some((fh.clone(), 0)));

    // EXCLUSIVE: a retry with the same verifier is the same file; another verifier EXIST.
    let excl = |v: &[u8; 8]| Args::default().u32(2).fixed(v);
    let (st, made) = create(&mut s, &ROOT_FH, b"x", excl(b"verifier"));
    assert_eq!(st, 0);
    let x = made.unwrap().0;
    assert_eq!(x, tree::handle_for(33));
    assert_eq!(create(&mut s, &ROOT_FH, b"x", excl(b"verifier")).1.unwrap().0, x);
    assert_eq!(create(&mut s, &ROOT_FH, b"x", excl(b"other-vf")).0, 17);
    assert_eq!(create(&mut s, &ROOT_FH, b"five", excl(b"verifier")).0, 17);

    // New names are appended, so READDIR shows them last.
    let (names, ..) = readdir(&mut s, &ROOT_FH, 0, &[0; 8], 8192).unwrap();
    assert_eq!(names[names.len() - 2..], ["newfile", "x"]);

    // Bad names and places.
    assert_eq!(create(&mut s, &ROOT_FH, b".", unchecked(None)).0, 17);
    assert_eq!(create(&mut s, &ROOT_FH, b"dir", unchecked(None)).0, 17);
    assert_eq!(create(&mut s, &ROOT_FH, b"a/b", unchecked(None)).0, 22);
    assert_eq!(create(&mut s, &ROOT_FH, b"", unchecked(None)).0, 22);
    assert_eq!(create(&mut s, &ROOT_FH, &[b'n'; 256], unchecked(None)).0, 63);
    let five = fh_of(&mut s, "five");
    assert_eq!(create(&mut s, &five, b"y", unchecked(None)).0, 20);
    assert_eq!(create(&mut s, &[9; 8], b"y", unchecked(None)).0, 70);
}

#[test]
fn create_and_setattr_garbage() {
    let mut s = Nfs3Server::new();
    // createmode3 3 is no createmode.
    let a = Args::default().opaque(&ROOT_FH).opaque(b"n").u32(3);
    assert_eq!(s.call(NFS, 3, CREATE, &a.0), UlpOutcome::GarbageArgs);
    // time_how 3 is no time_how.
    let a = sattr(Args::default().opaque(&ROOT_FH), None, None, 3).u32(0);
    assert_eq!(s.call(NFS, 3, SETATTR, &a.0), UlpOutcome::GarbageArgs);
    // SETATTR missing its guard.
    let a = sattr(Args::default().opaque(&ROOT_FH), None, None, 0);
    assert_eq!(s.call(NFS, 3, SETATTR, &a.0), UlpOutcome::GarbageArgs);
    // ACCESS missing its mask; COMMIT missing its count.
    let a = Args::default().opaque(&ROOT_FH);
    assert_eq!(s.call(NFS, 3, ACCESS, &a.0), UlpOutcome::GarbageArgs);
    let a = Args::default().opaque(&ROOT_FH).u64(0);
    assert_eq!(s.call(NFS, 3, COMMIT, &a.0), UlpOutcome::GarbageArgs);
}

/// Per entry: fileid, name, cookie, attributes' fileid, handle.
type PlusEntry = (u64, String, u64, u64, Vec<u8>);

/// READDIRPLUS3args: dir, cookie, cookieverf, dircount, maxcount.
fn readdirplus(
    s: &mut Nfs3Server,
    fh: &[u8],
    cookie: u64,
    verf: &[u8],
    dircount: u32,
    maxcount: u32,
) -> Result<(Vec<PlusEntry>, bool, usize), u32> {
    let r = call(s, READDIRPLUS, Args::default().opaque(fh).u64(cookie).fixed(verf).u32(dircount).u32(maxcount));
    let (st, attr, mut d) = status_attr(&r);
    if st != 0 {
        d.done();
        return Err(st);
    }
    assert_eq!(attr.expect("dir_attributes").ftype, 2);
    assert_eq!(d.bytes(8), b"COOKIEV1");
    let mut entries = Vec::new();
    // dirlistplus3: entryplus3 *entries, bool eof.
    while d.u32() == 1 {
        let fileid = d.u64();
        let name = String::from_utf8(d.opaque().to_vec()).unwrap();
        let cookie = d.u64();
        let attr = post_op(&mut d).expect("name_attributes");
        assert_eq!(d.u32(), 1, "handle_follows");
        let handle = d.opaque().to_vec();
        entries.push((fileid, name, cookie, attr.fileid, handle));
    }
    let eof = d.u32() == 1;
    d.done();
    Ok((entries, eof, r.head.len() - 4))
}

#[test]
fn readdirplus_root_and_dir() {
    let mut s = Nfs3Server::new();
    let (entries, eof, len) = readdirplus(&mut s, &ROOT_FH, 0, &[0; 8], 8192, 32768).unwrap();
    assert!(eof);
    let names: Vec<&str> = entries.iter().map(|e| e.1.as_str()).collect();
    let mut want: Vec<&str> = tree::FILES.iter().map(|f| f.0).collect();
    want.extend(["link", "longlink", "dir"]);
    assert_eq!(names, want);
    for (i, (fileid, _, cookie, attr_fileid, handle)) in entries.iter().enumerate() {
        assert_eq!(*fileid, i as u64 + 2, "fileids in construction order");
        assert_eq!(*cookie, i as u64 + 1);
        assert_eq!(attr_fileid, fileid);
        assert_eq!(*handle, tree::handle_for(*fileid));
    }
    assert!(len <= 32768);

    // dircount bounds fileid + name + cookie (8 + 4 + 28 + 8 = 48 bytes per entry of dir):
    // 500 bytes hold 10 entries.
    let dir = fh_of(&mut s, "dir");
    let (first, eof, _) = readdirplus(&mut s, &dir, 0, &[0; 8], 500, 32768).unwrap();
    assert!(!eof);
    assert_eq!(first.len(), 10);
    assert_eq!(first[9].1, dir_entry_name(9));
    let (rest, eof, _) = readdirplus(&mut s, &dir, first[9].2, b"COOKIEV1", 500, 32768).unwrap();
    assert!(eof);
    assert_eq!(rest.len(), 10);
    assert_eq!(rest[0].1, dir_entry_name(10));
    // maxcount bounds the READDIRPLUS3resok: dir_attributes 88, cookieverf 8, list end and
    // eof 8 = 104; an entry of dir 4 + 48 + 88 (attributes) + 4 + 20 (handle) = 164.
    let (two, eof, len) = readdirplus(&mut s, &dir, 0, &[0; 8], 8192, 432).unwrap();
    assert_eq!((two.len(), eof, len), (2, false, 432));
    let (one, _, len) = readdirplus(&mut s, &dir, 0, &[0; 8], 8192, 431).unwrap();
    assert_eq!((one.len(), len), (1, 268));
    // Room for no entry: NFS3ERR_TOOSMALL; a bad cookie or verifier: NFS3ERR_BAD_COOKIE.
    assert_eq!(readdirplus(&mut s, &dir, 0, &[0; 8], 8192, 267).unwrap_err(), 10005);
    assert_eq!(readdirplus(&mut s, &dir, 0, &[0; 8], 10, 8192).unwrap_err(), 10005);
    assert_eq!(readdirplus(&mut s, &dir, 5, &[0; 8], 8192, 8192).unwrap_err(), 10003);
    assert_eq!(readdirplus(&mut s, &dir, 21, b"COOKIEV1", 8192, 8192).unwrap_err(), 10003);
    // Of a file: NFS3ERR_NOTDIR.
    let five = fh_of(&mut s, "five");
    assert_eq!(readdirplus(&mut s, &five, 0, &[0; 8], 8192, 8192).unwrap_err(), 20);
}
