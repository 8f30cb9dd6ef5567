// The machine's memory bandwidth, measured: the roofline a decode step is held against (bytes
// of weights each generated token must stream ÷ bandwidth = the fastest possible token).
#pragma once

namespace lpx::core::bench {

// GB/s of `threads` threads streaming a buffer far larger than the caches: best of 5 passes.
// read: summing 1 GiB, each thread its slice as four prefetched streams (what decode does to
// weights, without the arithmetic); copy: memcpy of 512 MiB, read + written bytes.
double read_bandwidth_gbs(unsigned threads);
double copy_bandwidth_gbs(unsigned threads);

}  // namespace lpx::core::bench
