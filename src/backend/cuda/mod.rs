//! CUDA backend (cudarc, loaded dynamically): see the CUDA issue. Not yet implemented.
