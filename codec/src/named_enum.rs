//! Closed enums with a name per variant: the spelling a report, a profile, a table or a
//! command line uses for a variant, declared once beside it (the open wire enums of
//! [`crate::xdr`] name wire values; these name the toolkit's own vocabularies).

/// Declares a closed enum whose variants each have a name:
///
/// ```
/// rpcrdma_codec::named_enum! {
///     /// How a peer went down.
///     #[derive(Debug, Clone, Copy, PartialEq, Eq)]
///     pub enum DownKind {
///         /// A new connection was refused.
///         Crashed = "crashed",
///         Wedged = "wedged",
///     }
/// }
/// assert_eq!(DownKind::Wedged.name(), "wedged");
/// assert_eq!(DownKind::from_name("crashed"), Some(DownKind::Crashed));
/// assert_eq!(DownKind::from_name("Crashed"), None);
/// assert_eq!(DownKind::ALL, &[DownKind::Crashed, DownKind::Wedged]);
/// ```
///
/// The enum keeps its own attributes (derive at least `Clone` and `Copy`: `name` takes the
/// value). It gets `ALL` (every variant, in declaration order), `name`, and `from_name`, its
/// inverse (the exact spelling; None for any other string). A name given twice does not
/// compile (`from_name` could not tell the two apart):
///
/// ```compile_fail
/// rpcrdma_codec::named_enum! {
///     #[derive(Clone, Copy)]
///     pub enum Twice {
///         A = "same",
///         B = "same",
///     }
/// }
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $ty:ident {
            $( $(#[$vmeta:meta])* $variant:ident = $name:literal, )*
        }
    ) => {
        $(#[$meta])*
        $vis enum $ty {
            $( $(#[$vmeta])* $variant, )*
        }

        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),*];

            /// Its name.
            pub const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }

            /// The variant of that name (exact spelling), or None.
            pub fn from_name(name: &str) -> Option<$ty> {
                match name {
                    $($name => Some($ty::$variant),)*
                    _ => None,
                }
            }
        }

        // Every name once, checked while compiling.
        const _: () = {
            let names: &[&str] = &[$($name),*];
            let mut i = 0;
            while i < names.len() {
                let mut j = i + 1;
                while j < names.len() {
                    assert!(
                        !$crate::named_enum::same(names[i], names[j]),
                        concat!("two variants of ", stringify!($ty), " have the same name")
                    );
                    j += 1;
                }
                i += 1;
            }
        };
    };
}

/// Whether two names are the same (a `const fn`, for [`named_enum!`]'s check).
#[doc(hidden)]
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}
