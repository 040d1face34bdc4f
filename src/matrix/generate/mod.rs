//! Deterministic matrix generators (generators helper).
