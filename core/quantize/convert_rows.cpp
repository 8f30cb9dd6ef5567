#include "quantize/convert_rows.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "lpx/cpp/tensor_types.hpp"
#include "reference/dequantize.hpp"
#include "reference/quantize_weights.hpp"

namespace lpx::core {
namespace {

// Runs fn(first, count) over [0, n) in up to `threads` contiguous parts.
template <class Fn>
void in_parallel(std::uint64_t n, unsigned threads, Fn fn) {
  const std::uint64_t parts = std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, n));
  std::vector<std::thread> workers;
  for (std::uint64_t p = 1; p < parts; ++p) {
    workers.emplace_back([&, p] { fn(n * p / parts, n * (p + 1) / parts - n * p / parts); });
  }
  fn(0, n / parts);
  for (std::thread& w : workers) w.join();
}

}  // namespace

unsigned conversion_threads(unsigned requested) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return std::min(requested != 0 ? requested : cores, 4 * cores);
}

Expected<bool> convert_rows(lpx_tensor_type from, const void* in, lpx_tensor_type to, void* out,
                            std::uint64_t rows, std::uint64_t columns, unsigned threads,
                            const std::string& what, ConvertScratch& scratch) {
  const std::uint64_t in_row = *tensor_row_bytes(from, columns);
  const std::uint64_t out_row = *tensor_row_bytes(to, columns);
  const auto* source = static_cast<const std::uint8_t*>(in);
  auto* target = static_cast<std::uint8_t*>(out);
  scratch.values.resize(rows * columns);
  std::atomic<bool> decoded{true}, finite{true}, representable{true};
  in_parallel(rows, threads, [&](std::uint64_t r0, std::uint64_t n) {
    float* v = scratch.values.data() + r0 * columns;
    for (std::uint64_t r = 0; r < n; ++r) {
      if (kernels::reference::dequantize_row(from, source + (r0 + r) * in_row, columns, v + r * columns) !=
          kernels::reference::DequantizeStatus::ok) {
        decoded = false;
      }
    }
    if (!std::all_of(v, v + n * columns, [](float x) { return std::isfinite(x); })) finite = false;
    std::uint8_t* q = target + r0 * out_row;
    kernels::reference::quantize_weight_rows(to, v, static_cast<std::int64_t>(n), static_cast<std::int64_t>(columns), q);
    if (!kernels::reference::quantized_rows_finite(to, q, static_cast<std::int64_t>(n),
                                                   static_cast<std::int64_t>(columns))) {
      representable = false;
    }
  });
  const std::string from_name = tensor_type_traits(from)->name;
  const std::string to_name = tensor_type_traits(to)->name;
  if (!decoded) return internal_error("tensor '" + what + "': cannot decode " + from_name);
  if (!finite) return invalid_argument("tensor '" + what + "' holds NaN or infinite weights");
  if (!representable) {
    return invalid_argument("tensor '" + what + "' has weights too large for " + to_name +
                            " (its scales overflow f16)");
  }
  return true;
}

}  // namespace lpx::core
