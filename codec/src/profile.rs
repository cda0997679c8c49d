//! Profiles: the choices the specs leave open, as one small options value passed to
//! decoders and encoders. Each default is the resolution in the project's wire notes.

/// The RDMA_ERROR union's handling of unknown error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorArm {
    /// RFC 8166 4.1.2: no default arm; an unknown rdma_err is an XDR error.
    #[default]
    Rfc8166,
    /// RFC 5666 4.3: `default: uint32 rdma_extra[8]`; any other code carries 32 bytes.
    Rfc5666,
}

/// RDMA_MSGP: which opaque items get padded (RFC 5666 3.9 says both "at or above" and "exceeds").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MsgpThreshold {
    /// Pad items whose length is >= rdma_thresh ("the opaque data size at or above which").
    #[default]
    AtOrAbove,
    /// Pad items whose length is > rdma_thresh ("Where the decoded length exceeds").
    Above,
}

/// RDMA_MSGP: where alignment is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MsgpAlignOrigin {
    /// From the start of the received Send buffer (transport header included): the RFC 5666 3.9 figure.
    #[default]
    SendBuffer,
    /// From the start of the RPC payload stream.
    PayloadStream,
}

/// RDMA-CM private data: where the format identifier may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrivateDataLocate {
    /// RFC 8797 5.2: search the whole buffer at any byte offset.
    #[default]
    Search,
    /// cm-pvt-data -00/-01 and Linux: the first four octets only.
    OffsetZero,
}

/// Version Two header envelope revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum V2Envelope {
    /// draft-cel-nfsv4-rpcrdma-version-two-01: RDMA2_OPTIONAL carries rdma_optdir.
    #[default]
    Draft01,
    /// -00: no rdma_optdir (and no rdma_direction in chunk lists).
    Draft00,
}

/// Version Two error-code numbering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum V2ErrorNumbering {
    /// -00/-01: VERS=1, BAD_HEADER=2, INVAL_OPTION=3.
    #[default]
    Draft01,
    /// -02/-03: VERS=1, BAD_XDR=2, CANT_REPLY/REPLY_RESOURCE=3, INVAL_PROC=4, INVAL_OPTION=5, SYSTEM=6.
    Draft02,
    /// -04..-07: ..., INVAL_PROC=3, READ_CHUNKS=4, ..., INVAL_OPTION=9, SYSTEM=10.
    Draft04,
}

/// rtrext-03 opttype numbering (wire notes R10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RtrextOpttypes {
    /// The draft's operations table: XMTREQ=5 .. REPTERR=8 (collision-free beside xcharext).
    #[default]
    Combined,
    /// The draft's XDR: XMTREQ=1 .. REPTERR=4 (rtrext alone).
    Literal,
}

/// Transport characteristic / property id table (wire notes R11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PropertyIds {
    /// xcharext-02: RBSIZ=1, REQREMINV=2, BRS=3; rtrext properties unavailable at 3.
    #[default]
    Xcharext02,
    /// V2 -03..-07: RBSIZ=1, BRS=2; rtrext RTRSUPP=3, RBSTRUCT=4, REQRXLIM=5, RESPSXLIM=6.
    V2Draft03,
}

/// xcharsubset bit numbering (wire notes X9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubsetBitOrder {
    /// Bit N is `word[N / 32] >> (N % 32) & 1` (the NFSv4 bitmap4 convention).
    #[default]
    LsbFirst,
    /// Bit N is `word[N / 32] >> (31 - N % 32) & 1`.
    MsbFirst,
}

/// Every selectable spec choice. `Profile::default()` is the project's resolution of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Profile {
    pub error_arm: ErrorArm,
    pub msgp_threshold: MsgpThreshold,
    pub msgp_align_origin: MsgpAlignOrigin,
    pub private_data_locate: PrivateDataLocate,
    pub v2_envelope: V2Envelope,
    pub v2_error_numbering: V2ErrorNumbering,
    pub rtrext_opttypes: RtrextOpttypes,
    pub property_ids: PropertyIds,
    pub subset_bit_order: SubsetBitOrder,
}

impl Profile {
    /// Applies one named choice (`rfc5666-error-arm`, `msgp-above`, `msgp-origin-payload`,
    /// `pd-offset-zero`, `v2-00`, `v2-errors-02`, `v2-errors-04`, `rtrext-literal`,
    /// `props-v2-03`, `subset-msb`). Returns false for an unknown name.
    pub fn apply(&mut self, name: &str) -> bool {
        match name {
            "rfc5666-error-arm" => self.error_arm = ErrorArm::Rfc5666,
            "msgp-above" => self.msgp_threshold = MsgpThreshold::Above,
            "msgp-origin-payload" => self.msgp_align_origin = MsgpAlignOrigin::PayloadStream,
            "pd-offset-zero" => self.private_data_locate = PrivateDataLocate::OffsetZero,
            "v2-00" => self.v2_envelope = V2Envelope::Draft00,
            "v2-errors-02" => self.v2_error_numbering = V2ErrorNumbering::Draft02,
            "v2-errors-04" => self.v2_error_numbering = V2ErrorNumbering::Draft04,
            "rtrext-literal" => self.rtrext_opttypes = RtrextOpttypes::Literal,
            "props-v2-03" => self.property_ids = PropertyIds::V2Draft03,
            "subset-msb" => self.subset_bit_order = SubsetBitOrder::MsbFirst,
            _ => return false,
        }
        true
    }

    /// The names [`Profile::apply`] accepts.
    pub const NAMES: &'static [&'static str] = &[
        "rfc5666-error-arm",
        "msgp-above",
        "msgp-origin-payload",
        "pd-offset-zero",
        "v2-00",
        "v2-errors-02",
        "v2-errors-04",
        "rtrext-literal",
        "props-v2-03",
        "subset-msb",
    ];

    /// The named choices in force, in [`Profile::NAMES`] order: those that [`Profile::apply`]
    /// would leave unchanged; none for the default. Applied to `Profile::default()` they give
    /// `self` again, so a report or a reproducer records a profile as these names.
    pub fn choices(&self) -> impl Iterator<Item = &'static str> + '_ {
        Self::NAMES.iter().copied().filter(move |name| {
            let mut p = *self;
            p.apply(name);
            p == *self
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_changes_the_default() {
        for name in Profile::NAMES {
            let mut p = Profile::default();
            assert!(p.apply(name), "{name}");
            assert_ne!(p, Profile::default(), "{name} changed nothing");
        }
        assert!(!Profile::default().apply("no-such-choice"));
    }

    #[test]
    fn choices_name_what_is_in_force_and_rebuild_it() {
        assert_eq!(Profile::default().choices().count(), 0);
        let mut p = Profile::default();
        for name in ["subset-msb", "v2-errors-02", "rfc5666-error-arm", "v2-errors-04"] {
            p.apply(name);
        }
        // The later of two choices of one field wins; the order is NAMES'.
        let names: Vec<&str> = p.choices().collect();
        assert_eq!(names, ["rfc5666-error-arm", "v2-errors-04", "subset-msb"]);
        let mut q = Profile::default();
        names.iter().for_each(|n| assert!(q.apply(n)));
        assert_eq!(q, p);
        for name in Profile::NAMES {
            let mut one = Profile::default();
            one.apply(name);
            assert_eq!(one.choices().collect::<Vec<_>>(), [*name]);
        }
    }
}
