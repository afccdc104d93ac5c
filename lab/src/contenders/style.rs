//! How a contender looks in every plot and table: its [`Look`] (name, structure, colour,
//! marker). The lists of looks are in `crate::contenders::looks` (and the filters' in
//! `crate::contenders`, beside their recipes); this module names none of them.

/// The shape of a contender's points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A filled triangle.
    Triangle,
    /// A filled diamond.
    Diamond,
}

/// One named contender.
#[derive(Clone, Copy, Debug)]
pub struct Look {
    /// The name in every CSV, legend and table.
    pub name: &'static str,
    /// The filter's structure (blocked Bloom, cuckoo, xor, …), for the filters the lab
    /// builds (`""` for the rest).
    pub structure: &'static str,
    /// Its colour in every plot, as `(r, g, b)`.
    pub colour: (u8, u8, u8),
    /// Its marker in every plot.
    pub marker: Marker,
}

/// A [`Look`] from its name, structure, colour as `(r, g, b)` and marker.
pub const fn look(
    name: &'static str,
    structure: &'static str,
    rgb: (u8, u8, u8),
    marker: Marker,
) -> Look {
    Look {
        name,
        structure,
        colour: rgb,
        marker,
    }
}
