// Rows of a tensor from one element type to another, through f32: dequantized exactly by the
// reference kernels, then quantized by the reference quantizers (byte for byte ggml's). Rows are
// split across threads; the bytes do not depend on how many.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lpx/kinds/tensor.h"
#include "util/expected.hpp"

namespace lpx::core {

// Reused buffers, so that converting slab after slab allocates once.
struct ConvertScratch {
  std::vector<float> values;
};

// Converts `rows` rows of `columns` elements at `in` (type `from`) into `out` (type `to`, sized
// rows * its row bytes). Errors name `what` (a tensor): weights that are NaN or infinite, or too
// large for the target type's f16 scales.
Expected<bool> convert_rows(lpx_tensor_type from, const void* in, lpx_tensor_type to, void* out,
                            std::uint64_t rows, std::uint64_t columns, unsigned threads,
                            const std::string& what, ConvertScratch& scratch);

// Every core, or `requested` when it is not 0 (at most four per core).
unsigned conversion_threads(unsigned requested);

}  // namespace lpx::core
