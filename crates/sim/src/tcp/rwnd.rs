//! The receiver's advertised window as Linux computes it. (Being written.)
