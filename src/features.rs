//! Matrix features (features helper).
