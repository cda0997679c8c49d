//! Open wire enums: a newtype over the wire integer with named constants (rustls'
//! `enum_builder!`, quinn's `frame_types!`). Unknown values survive decoding and encoding, so a
//! tool that sends and judges bad values can hold them; `Debug` and `Display` print the spec's
//! name when the value has one, the number otherwise.

/// Declares an open wire enum:
///
/// ```ignore
/// wire_enum! {
///     /// rdma_proc (RFC 8166 4.2.4).
///     pub struct Proc(u32) {
///         /// A message with its chunk lists and payload.
///         RDMA_MSG = 0,
///         RDMA_NOMSG = 1,
///     }
/// }
/// ```
///
/// Each constant is named exactly as in the spec's XDR, and [`name`](#method.name) returns that
/// spelling. `Debug` prints the name or `Proc(7)`; `Display` prints the name or `7`.
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis struct $ty:ident($repr:ty) {
            $( $(#[$cmeta:meta])* $name:ident = $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        $vis struct $ty(pub $repr);

        #[allow(dead_code)]
        impl $ty {
            $( $(#[$cmeta])* pub const $name: $ty = $ty($value); )*

            /// Every named value, in declaration order.
            pub const KNOWN: &'static [$ty] = &[$($ty::$name),*];

            /// The value on the wire.
            #[inline]
            pub const fn get(self) -> $repr {
                self.0
            }

            /// The spec's name for this value, or None for a value it does not define.
            #[inline]
            pub const fn name(self) -> Option<&'static str> {
                $( if self.0 == $value { return Some(stringify!($name)); } )*
                None
            }

            /// Whether the spec defines this value.
            #[inline]
            pub const fn is_known(self) -> bool {
                self.name().is_some()
            }
        }

        impl From<$repr> for $ty {
            #[inline]
            fn from(v: $repr) -> $ty {
                $ty(v)
            }
        }

        impl From<$ty> for $repr {
            #[inline]
            fn from(v: $ty) -> $repr {
                v.0
            }
        }

        impl core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, concat!(stringify!($ty), "({})"), self.0),
                }
            }
        }

        impl core::fmt::Display for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                match self.name() {
                    Some(n) => f.write_str(n),
                    None => write!(f, "{}", self.0),
                }
            }
        }
    };
}
pub(crate) use wire_enum;

#[cfg(test)]
mod tests {
    wire_enum! {
        /// A test enum.
        pub struct Colour(u32) {
            RED = 0,
            /// Documented.
            GREEN = 7,
        }
    }

    #[test]
    fn names_numbers_and_unknowns() {
        assert_eq!(Colour::GREEN, Colour(7));
        assert_eq!(Colour::GREEN.name(), Some("GREEN"));
        assert_eq!(Colour(8).name(), None);
        assert!(!Colour(8).is_known());
        assert_eq!(std::format!("{:?} {:?}", Colour::RED, Colour(8)), "RED Colour(8)");
        assert_eq!(std::format!("{} {}", Colour::RED, Colour(8)), "RED 8");
        assert_eq!(Colour::KNOWN, &[Colour::RED, Colour::GREEN]);
        assert_eq!(u32::from(Colour::GREEN), 7);
        assert!(matches!(Colour(0), Colour::RED));
    }
}
