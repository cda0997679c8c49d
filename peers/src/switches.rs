//! Fault switches, declared once each: a field, its command-line name and its doc, in one
//! line of a [`fault_switches!`] table. The reference peers misbehave on purpose through them,
//! so tests can prove each check notices the requirement it judges being broken.

/// Declares a struct of boolean switches with `NAMES`, `set(name)` and `only(name)`:
/// `fault_switches! { /// doc
///     pub struct Faults { /// doc of the switch
///         zero_credit = "zero-credit", ... } }`
#[macro_export]
macro_rules! fault_switches {
    ($(#[$meta:meta])* pub struct $name:ident { $($(#[doc = $doc:literal])* $field:ident = $label:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        pub struct $name {
            $($(#[doc = $doc])* pub $field: bool,)*
        }

        impl $name {
            /// Every switch by name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($label),*];

            /// The statements of the requirements matrix the switch `fault` breaks (the
            /// table's `BREAKS`, beside the switches); none for a switch it does not list.
            pub fn breaks(fault: &str) -> &'static [&'static str] {
                Self::BREAKS.iter().find(|(f, _)| *f == fault).map_or(&[], |(_, s)| s)
            }

            /// Turns one switch on by name; false for an unknown name.
            pub fn set(&mut self, name: &str) -> bool {
                match name {
                    $($label => self.$field = true,)*
                    _ => return false,
                }
                true
            }

            /// A value with exactly the named switch on. Panics for an unknown name.
            pub fn only(name: &str) -> Self {
                let mut f = Self::default();
                assert!(f.set(name), "unknown fault {name}");
                f
            }
        }
    };
}
