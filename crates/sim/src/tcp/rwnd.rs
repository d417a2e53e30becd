//! The receiver's advertised window as Linux computes it. (Being written.)

/// Initial `tp->scaling_ratio` of kernels ≥ 6.6: `TCP_DEFAULT_SCALING_RATIO` =
/// `(1200 << TCP_RMEM_TO_WIN_SCALE) / SKB_TRUESIZE(4096)` (`include/net/tcp.h`), ≈ 25 %.
/// Value to be confirmed by the rwnd work.
pub const TCP_DEFAULT_SCALING_RATIO: u8 = 65;
