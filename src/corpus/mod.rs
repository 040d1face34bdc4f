//! The training corpus of the learned models: which matrices ([`draw`]), how they are measured
//! ([`collect`]) and the table the measurements are kept in ([`table`]).
//!
//! One row per matrix × precision with the features once and the time of every configuration
//! (every kernel and thread mapping, several block sizes, SELL-C-σ with two parameter sets,
//! every cuSPARSE algorithm). Tables measured on the H200 and the H100 are committed under
//! `data/corpus/`, so that every model trains without a GPU.

pub mod collect;
pub mod draw;
pub mod refeature;
pub mod subset;
pub mod table;

pub use collect::{collect, configurations, CollectOptions, CollectOutcome};
pub use draw::{draw, Build, DrawOptions, Item};
pub use table::{ConfigTime, TableRow, TABLE_SCHEMA};
