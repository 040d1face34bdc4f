//! The instrumenting phase of the analytical model (004 §3, 000 §III-A…D): compute strip sizes
//! from the device, lay out the benchmark matrices, time them on a backend.
//!
//! * [`device`] — [`DeviceLimits`], the device description the phase needs;
//! * [`strips`](mod@strips) — strip sizes `S` per kernel and strip counts `⌈n / S⌉`;
//! * [`suite`] — which benchmark matrices to measure, within the global-memory bounds;
//! * [`synthetic`] — the benchmark matrices themselves, a pure function of (row, entry) so a GPU
//!   can build them in place;
//! * [`source`] — host or on-device construction;
//! * [`measure`](mod@measure) — the timing loop;
//! * [`micro`] — micro-benchmarks of the device's launch floor and L2 / DRAM bandwidth;
//! * [`rowdist`] / [`stat_source`] / [`stat_suite`] — the statistical models' benchmark
//!   matrices (001: row lengths from a normal or uniform distribution, or constant), where they
//!   are built, and their suite;
//! * [`cost`] — the estimated cost of a plan on a GPU (sizing a session, cheapest first);
//! * [`run`] — plan, measure and fit one precision.
//!
//! The modelling phase (fitting the relationships) lives in [`crate::model`]; [`crate::profile`]
//! stores both.

pub mod cost;
pub mod device;
pub mod measure;
pub mod micro;
pub mod rowdist;
pub mod run;
pub mod source;
pub mod stat_source;
pub mod stat_suite;
pub mod strips;
pub mod suite;
pub mod synthetic;

pub use device::DeviceLimits;
pub use measure::{measure, measure_fitting, MeasureOptions, Measurement, Statistic};
pub use rowdist::{RowDist, RowLengths, Spread};
pub use run::run_precision;
pub use source::{AutoSource, BenchmarkSource, DeviceSource, HostSource};
pub use stat_source::DistributedSource;
pub use stat_suite::{StatSuite, STAT_KERNELS};
pub use strips::{strip_count, strip_size, strips};
pub use suite::{plan, BenchmarkPoint, Plan, SuiteConfig};
