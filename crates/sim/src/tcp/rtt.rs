//! RTT estimation and the retransmission timeout as Linux computes them. (Being written.)
