//! Fuzz the Matrix Market reader: any bytes must give a valid matrix or an error, never a
//! panic, a crash or a runaway allocation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sparsecast::matrix::mm;

fuzz_target!(|data: &[u8]| {
    if let Ok((m, info)) = mm::read_bytes::<f64>("fuzz", data) {
        m.validate().expect("the reader returned an invalid CSR");
        assert_eq!((m.nrows, m.ncols), (info.nrows, info.ncols));
        // Chunking must not change the result.
        let (m3, _) = mm::read_bytes_chunked::<f64>("fuzz", data, Some(3))
            .expect("a 3-chunk parse rejected what the default parse accepted");
        assert_eq!(
            m3.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            m.values.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
        assert_eq!((m3.row_ptr, m3.col_idx), (m.row_ptr, m.col_idx));
    }
    let _ = mm::read_bytes::<f32>("fuzz", data);
    let _ = mm::vector_from_bytes("fuzz", data);
});
