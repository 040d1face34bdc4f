//! CPU backend: rayon-parallel kernels of every format. (formats helper)
