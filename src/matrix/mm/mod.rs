//! Matrix Market reader and writer (matrix-market helper).
