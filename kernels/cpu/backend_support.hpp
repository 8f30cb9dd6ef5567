// What the CPU backend plugins (cpu, cpu-scalar) check and size the same way: weight shapes,
// kernel arguments, scratch sizes. Errors are thrown as lpx::Error, which the plugin trampolines
// turn into statuses. Header-only, compiled into each plugin.
#pragma once

#include <lpx/kinds/quant_backend.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <lpx/cpp/options.hpp>
#include <lpx/cpp/status.hpp>
#include <string>

#include "reference/dequantize.hpp"
#include "reference/matmul_i16.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::cpu {

// What both CPU backends declare: the device and every tensor type they multiply.
inline constexpr const char* kCapabilities[] = {
    "device:cpu",  "tensor:f32",  "tensor:f16",  "tensor:bf16", "tensor:q8_0",
    "tensor:q4_0", "tensor:q4_1", "tensor:q5_0", "tensor:q5_1", "tensor:q4_k",
    "tensor:q5_k", "tensor:q6_k", "tensor:q8_k"};

// The `activations` option of both plugins: the precision of the activations in matmuls.
inline constexpr lpx_option_spec kActivationsOption = lpx::one_of(
    lpx::option("activations", LPX_OPTION_STRING, "\"i16\"",
                "Activation precision in matmuls: i16 = 16-bit blocks for Q8_0/Q4_0/Q4_1/Q5_0/Q5_1 "
                "and Q4_K/Q5_K/Q6_K weights, f32 for the rest (the model's arithmetic within 1e-6 KL, integer speed); "
                "q8 = 8-bit blocks like llama.cpp (fastest, its exact results); f32 = float "
                "activations against exactly dequantized weights (the reference, slowest)"),
    "q8|f32|i16");

// How a matmul treats its activations (reference/matmul.hpp, matmul_f32.hpp, matmul_i16.hpp).
enum class Activations { q8, f32, i16 };

// The `activations` option; the default, i16, when the host passed no value at all.
inline Activations activations_of(const lpx::Options& options) {
  if (!options.is_set("activations")) return Activations::i16;
  const std::string value = options.get_string("activations");
  if (value == "q8") return Activations::q8;
  if (value == "f32") return Activations::f32;
  if (value == "i16") return Activations::i16;
  throw Error(LPX_ERR_INVALID_ARGUMENT, "activations must be q8, f32 or i16, not \"" + value + "\"");
}

inline const char* name_of(Activations a) {
  return a == Activations::q8 ? "q8" : a == Activations::f32 ? "f32" : "i16";
}

// Whether a matmul of `type` runs in the f32 mode: always in f32 mode, and in i16 mode for the
// types without an int16 dot.
inline bool runs_f32(Activations a, std::int32_t type) {
  return a == Activations::f32 || (a == Activations::i16 && !reference::i16_dot_type(type));
}

// Rows, columns and bytes per row of a weight, checked against its declared size.
struct WeightLayout {
  std::size_t rows;
  std::size_t columns;
  std::size_t row_bytes;
};

inline WeightLayout layout_of(const lpx_tensor_view& w) {
  if (w.n_dims < 1 || w.n_dims > 2 || w.dims[0] <= 0 || (w.n_dims == 2 && w.dims[1] <= 0)) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "weight must be a non-empty vector or matrix");
  }
  const auto columns = static_cast<std::size_t>(w.dims[0]);
  const auto rows = w.n_dims == 2 ? static_cast<std::size_t>(w.dims[1]) : std::size_t{1};
  if (!reference::is_valid_tensor_type(w.type)) {
    throw Error(LPX_ERR_UNSUPPORTED, "tensor type " + std::to_string(w.type) + " is not supported");
  }
  const auto row_bytes = reference::row_size_bytes(w.type, columns);
  if (!row_bytes) {
    throw Error(LPX_ERR_UNSUPPORTED, "rows of " + std::to_string(columns) +
                                         " elements are not whole blocks of this type");
  }
  if (*row_bytes != 0 && rows > w.size_bytes / *row_bytes) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "weight data is shorter than its shape");
  }
  return {rows, columns, static_cast<std::size_t>(*row_bytes)};
}

// Row `row` of `w` as f32 (the reference dequantizer: exact, and rarely on a hot path).
inline void dequantize_weight_row(const lpx_tensor_view& w, std::int64_t row, float* out) {
  const WeightLayout l = layout_of(w);
  if (row < 0 || static_cast<std::size_t>(row) >= l.rows) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "row " + std::to_string(row) + " of " + std::to_string(l.rows) + " does not exist");
  }
  const auto* data = static_cast<const std::uint8_t*>(w.data);
  const reference::DequantizeStatus status = reference::dequantize_row(
      w.type, data + static_cast<std::size_t>(row) * l.row_bytes, l.columns, out);
  if (status != reference::DequantizeStatus::ok) {
    throw Error(LPX_ERR_UNSUPPORTED, reference::describe(status));
  }
}

// Bytes of quantized activations that hold `rows` rows of `columns` elements in any dot format
// (f32, at 4 bytes per element, is the widest).
inline std::size_t activation_capacity(std::uint64_t rows, std::uint64_t columns) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::size_t>::max();
  if (columns != 0 && rows > kMax / 4 / columns) {
    throw Error(LPX_ERR_OUT_OF_MEMORY, "backend limits are too large");
  }
  return static_cast<std::size_t>(rows * columns * 4);
}

// Floats of one dequantized weight row of up to `columns` elements (the f32 mode's scratch).
inline std::size_t dequantized_row_capacity(std::uint64_t columns) {
  if (columns > std::numeric_limits<std::size_t>::max() / 4) {
    throw Error(LPX_ERR_OUT_OF_MEMORY, "backend limits are too large");
  }
  return static_cast<std::size_t>(columns);
}

inline void check_limits(const lpx_backend_limits& limits) {
  if (limits.struct_size < sizeof(lpx_backend_limits)) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "lpx_backend_limits is too small for this backend");
  }
}

inline void check_rope(const lpx_rope_params& p, std::size_t head_dim) {
  if (p.struct_size < sizeof(lpx_rope_params)) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "lpx_rope_params is too small for this backend");
  }
  if (p.mode != LPX_ROPE_NORMAL && p.mode != LPX_ROPE_NEOX) {
    throw Error(LPX_ERR_UNSUPPORTED, "unknown rope mode " + std::to_string(p.mode));
  }
  if (p.n_rot % 2 != 0 || p.n_rot > head_dim) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "rope n_rot must be even and at most head_dim");
  }
}

// Checks the shape of an attention call; returns the largest query position (or -1 when there
// are no rows).
inline std::int64_t check_attention(const lpx_attention_args& a) {
  if (a.struct_size < sizeof(lpx_attention_args)) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "lpx_attention_args is too small for this backend");
  }
  if (a.n_rows == 0) return -1;
  if (a.n_heads == 0 || a.n_kv_heads == 0 || a.n_heads % a.n_kv_heads != 0 || a.head_dim == 0 ||
      a.block_size == 0) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "attention needs heads, kv heads dividing them, head_dim and block_size > 0");
  }
  if (a.q == nullptr || a.out == nullptr || a.positions == nullptr || a.k_cache == nullptr ||
      a.v_cache == nullptr || a.block_table == nullptr) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "attention arguments hold a null pointer");
  }
  std::int64_t max_position = -1;
  for (std::uint32_t r = 0; r < a.n_rows; ++r) {
    if (a.positions[r] < 0) {
      throw Error(LPX_ERR_INVALID_ARGUMENT,
                  "attention position " + std::to_string(a.positions[r]) + " is negative");
    }
    if (a.positions[r] > max_position) max_position = a.positions[r];
  }
  return max_position;
}

}  // namespace lpx::kernels::cpu
