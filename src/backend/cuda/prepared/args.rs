//! The argument lists of our one-launch SpMV kernels, each written once, in the order of the
//! kernel's signature in `kernels/*.cu`. Every one of these kernels ends with `(…, const T* x,
//! T* y)`; x and y are added at launch ([`Launch::queue`]). The merge-path kernels, whose x and
//! y stand in the middle of the list, are launched in `kernel.rs`.

use super::kernel::cfg1;
use super::shared::Dev;
use cudarc::driver::{
    sys, CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, DriverError,
    PushKernelArg,
};
use std::ffi::c_void;
use std::sync::Arc;

/// One kernel argument before x and y.
pub(super) enum Arg<T> {
    /// A count or size (`u32`).
    U32(u32),
    /// An index array (`const u32*`).
    Idx(Dev<u32>),
    /// A signed offset array (`const int*`: DIA's diagonal offsets).
    Offsets(Dev<i32>),
    /// A value array (`const T*`).
    Val(Dev<T>),
    /// A byte array (`const unsigned char*`: ELL-BRO's bit widths).
    Bytes(Dev<u8>),
    /// A 64-bit word array (`const u64*`: ELL-BRO's symbols).
    Words(Dev<u64>),
    /// A 16-bit array (`const unsigned short*`: SEG-TILE's column offsets).
    Half(Dev<u16>),
    /// An index array the kernel writes (`u32*`: SELL's arrival counters). Pushed as a shared
    /// reference: the launch only needs its address, and the array is this launch's alone, used on
    /// one stream.
    Work(Dev<u32>),
    /// A value array the kernel writes (`T*`: SELL's accumulators); as [`Arg::Work`].
    WorkVal(Dev<T>),
}

/// One launch of a kernel `f(args…, x, y)` with `grid` blocks and no dynamic shared memory.
pub(super) struct Launch<T> {
    /// The kernel.
    pub f: CudaFunction,
    /// Blocks.
    pub grid: u32,
    /// The arguments before x and y, in the kernel's order (the device arrays live here).
    pub args: Vec<Arg<T>>,
}

impl<T: DeviceRepr> Launch<T> {
    /// Queue the kernel with `block` threads per block (x read-only, y written).
    pub fn queue(
        &self,
        s: &Arc<CudaStream>,
        block: u32,
        x: &CudaSlice<T>,
        y: &mut CudaSlice<T>,
    ) -> std::result::Result<(), DriverError> {
        let mut b = s.launch_builder(&self.f);
        for a in &self.args {
            match a {
                Arg::U32(v) => b.arg(v),
                Arg::Idx(a) => b.arg(&**a),
                Arg::Offsets(a) => b.arg(&**a),
                Arg::Val(a) => b.arg(&**a),
                Arg::Bytes(a) => b.arg(&**a),
                Arg::Words(a) => b.arg(&**a),
                Arg::Half(a) => b.arg(&**a),
                Arg::Work(a) => b.arg(&**a),
                Arg::WorkVal(a) => b.arg(&**a),
            };
        }
        b.arg(x).arg(y);
        // SAFETY: `args` was built by one of the functions below, which follow the kernels'
        // signatures, and every array has the length the kernel reads (set up by the caller).
        unsafe { b.launch(cfg1(self.grid, block, 0)) }.map(|_| ())
    }
}

impl<T: DeviceRepr> Launch<T> {
    /// Queue the kernel as the programmatic dependent of the kernel queued just before it in `s`
    /// (`cuLaunchKernelEx` with programmatic stream serialization, sm_90): it may start once every
    /// block of its predecessor has called `griddepcontrol.launch_dependents`, and must itself
    /// call `griddepcontrol.wait` before it touches what the predecessor writes. cudarc's
    /// launch builder sets no launch attributes, so the parameters are marshalled here: every
    /// argument is held in a 64-bit slot (a `u32` in the slot's low half, which is where a
    /// pointer to the slot reads it on a little-endian host). (It mirrors `queue`'s walk over
    /// the arguments on purpose: `queue` stays on cudarc's builder, which every other kernel's
    /// measured times were taken with.)
    pub fn queue_dependent(
        &self,
        s: &Arc<CudaStream>,
        block: u32,
        x: &CudaSlice<T>,
        y: &mut CudaSlice<T>,
    ) -> std::result::Result<(), DriverError> {
        const _: () = assert!(cfg!(target_endian = "little"));
        let mut slots: Vec<u64> = Vec::with_capacity(self.args.len() + 2);
        for a in &self.args {
            slots.push(match a {
                Arg::U32(v) => *v as u64,
                Arg::Idx(a) | Arg::Work(a) => a.device_ptr(s).0,
                Arg::Offsets(a) => a.device_ptr(s).0,
                Arg::Val(a) | Arg::WorkVal(a) => a.device_ptr(s).0,
                Arg::Bytes(a) => a.device_ptr(s).0,
                Arg::Words(a) => a.device_ptr(s).0,
                Arg::Half(a) => a.device_ptr(s).0,
            });
        }
        slots.push(x.device_ptr(s).0);
        slots.push(y.device_ptr_mut(s).0);
        let mut params: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|p| p as *mut u64 as *mut c_void)
            .collect();
        let mut attr = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value: sys::CUlaunchAttributeValue { pad: [0; 64] },
        };
        attr.value.programmaticStreamSerializationAllowed = 1;
        let cfg = sys::CUlaunchConfig {
            gridDimX: self.grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: 0,
            hStream: s.cu_stream(),
            attrs: &mut attr,
            numAttrs: 1,
        };
        // SAFETY: as `queue`: `args` follows the kernel's signature and every array has the
        // length the kernel reads; `slots`, `params` and `attr` outlive the call, which copies
        // the parameters.
        unsafe {
            sys::cuLaunchKernelEx(
                &cfg,
                self.f.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
            .result()
        }
    }
}

/// `csr_t{1,2,4,8,16,32}_*` (kernels/csr.cu): `nrows + 1` row offsets, `nnz` columns and values.
pub(super) fn csr<T>(
    nrows: u32,
    row_ptr: impl Into<Dev<u32>>,
    col: impl Into<Dev<u32>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nrows),
        Arg::Idx(row_ptr.into()),
        Arg::Idx(col.into()),
        Arg::Val(val.into()),
    ]
}

/// `ell_*` (kernels/ell.cu): column-major `nrows × width` columns and values.
pub(super) fn ell<T>(
    nrows: u32,
    width: u32,
    col: impl Into<Dev<u32>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nrows),
        Arg::U32(width),
        Arg::Idx(col.into()),
        Arg::Val(val.into()),
    ]
}

/// `coo_*` (kernels/coo.cu): `nnz` row-sorted rows, columns and values, `chunks` of 32 entries
/// per warp.
pub(super) fn coo<T>(
    nnz: u32,
    chunks: u32,
    rows: impl Into<Dev<u32>>,
    cols: impl Into<Dev<u32>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nnz),
        Arg::U32(chunks),
        Arg::Idx(rows.into()),
        Arg::Idx(cols.into()),
        Arg::Val(val.into()),
    ]
}

/// `jad_*` (kernels/jad.cu): the row permutation, `ndiag + 1` jagged-diagonal offsets, columns
/// and values.
pub(super) fn jad<T>(
    nrows: u32,
    ndiag: u32,
    perm: impl Into<Dev<u32>>,
    jd_ptr: impl Into<Dev<u32>>,
    col: impl Into<Dev<u32>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nrows),
        Arg::U32(ndiag),
        Arg::Idx(perm.into()),
        Arg::Idx(jd_ptr.into()),
        Arg::Idx(col.into()),
        Arg::Val(val.into()),
    ]
}

/// `sell_*` (kernels/sell.cu): `[nrows, C, split_above, units, unit blocks]`; the slice
/// offsets and widths, the row permutation and the columns; the values; each unit's lane group and
/// the groups (`sell_split.rs`); the groups' arrival counters and accumulators (32 a group), which
/// the kernel writes (zeroed here; the kernel leaves the counters at zero).
pub(super) fn sell<T>(
    counts: [u32; 5],
    arrays: [Dev<u32>; 4],
    val: Dev<T>,
    split: [Dev<u32>; 2],
    arrivals: Dev<u32>,
    acc: Dev<T>,
) -> Vec<Arg<T>> {
    let mut out: Vec<Arg<T>> = counts.into_iter().map(Arg::U32).collect();
    out.extend(arrays.into_iter().map(Arg::Idx));
    out.push(Arg::Val(val));
    out.extend(split.into_iter().map(Arg::Idx));
    out.push(Arg::Work(arrivals));
    out.push(Arg::WorkVal(acc));
    out
}

/// `dia_*` (kernels/dia.cu): `ndiag` diagonal offsets and their values.
pub(super) fn dia<T>(
    nrows: u32,
    ncols: u32,
    ndiag: u32,
    offsets: impl Into<Dev<i32>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nrows),
        Arg::U32(ncols),
        Arg::U32(ndiag),
        Arg::Offsets(offsets.into()),
        Arg::Val(val.into()),
    ]
}

/// `bsr_*` (kernels/bsr.cu): `nbrows` rows of `b × b` blocks: block-row offsets, block columns
/// and values.
pub(super) fn bsr<T>(
    nbrows: u32,
    nrows: u32,
    ncols: u32,
    b: u32,
    row_ptr: impl Into<Dev<u32>>,
    bcol: impl Into<Dev<u32>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nbrows),
        Arg::U32(nrows),
        Arg::U32(ncols),
        Arg::U32(b),
        Arg::Idx(row_ptr.into()),
        Arg::Idx(bcol.into()),
        Arg::Val(val.into()),
    ]
}

/// `ell_bro_*` (kernels/ell_bro.cu): slices of `h` rows: their first columns and symbols per row
/// before them, the bit widths of their columns, the symbols and the values.
pub(super) fn ell_bro<T>(
    nrows: u32,
    h: u32,
    col_ptr: impl Into<Dev<u32>>,
    sym_ptr: impl Into<Dev<u32>>,
    bits: impl Into<Dev<u8>>,
    sym: impl Into<Dev<u64>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nrows),
        Arg::U32(h),
        Arg::Idx(col_ptr.into()),
        Arg::Idx(sym_ptr.into()),
        Arg::Bytes(bits.into()),
        Arg::Words(sym.into()),
        Arg::Val(val.into()),
    ]
}

/// `segtile_{smem,l1}_*` (kernels/segtile.cu): tiles of `width` columns, the rows of each tile in
/// `groups` interleaved groups (one thread block each): `tiles × nrows + 1` segment offsets,
/// 16-bit column offsets and values.
pub(super) fn segtile<T>(
    nrows: u32,
    ncols: u32,
    width: u32,
    groups: u32,
    seg_ptr: impl Into<Dev<u32>>,
    col: impl Into<Dev<u16>>,
    val: impl Into<Dev<T>>,
) -> Vec<Arg<T>> {
    vec![
        Arg::U32(nrows),
        Arg::U32(ncols),
        Arg::U32(width),
        Arg::U32(groups),
        Arg::Idx(seg_ptr.into()),
        Arg::Half(col.into()),
        Arg::Val(val.into()),
    ]
}

/// One kernel argument read back from the device ([`Launch::download`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Dumped<T> {
    /// A count or size.
    U32(u32),
    /// An index array.
    Idx(Vec<u32>),
    /// A value array.
    Val(Vec<T>),
    /// A signed offset array (DIA's diagonals).
    Offsets(Vec<i32>),
    /// A byte array (ELL-BRO's bit widths).
    Bytes(Vec<u8>),
    /// A 64-bit word array (ELL-BRO's symbols).
    Words(Vec<u64>),
    /// A 16-bit array (SEG-TILE's column offsets).
    Half(Vec<u16>),
}

impl<T: DeviceRepr + Clone + Default> Launch<T> {
    /// Every argument before x and y, arrays copied to the host.
    pub fn download(&self, s: &Arc<CudaStream>) -> crate::Result<Vec<Dumped<T>>> {
        let err = |e: DriverError| crate::Error::Cuda(format!("reading kernel arrays back: {e:?}"));
        self.args
            .iter()
            .map(|a| {
                Ok(match a {
                    Arg::U32(v) => Dumped::U32(*v),
                    Arg::Idx(a) => Dumped::Idx(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::Val(a) => Dumped::Val(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::Offsets(a) => Dumped::Offsets(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::Bytes(a) => Dumped::Bytes(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::Words(a) => Dumped::Words(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::Half(a) => Dumped::Half(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::Work(a) => Dumped::Idx(s.clone_dtoh(&**a).map_err(err)?),
                    Arg::WorkVal(a) => Dumped::Val(s.clone_dtoh(&**a).map_err(err)?),
                })
            })
            .collect()
    }
}
