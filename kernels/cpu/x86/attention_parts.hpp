// Parts the two x86 attention kernels share (ops_attention.cpp: one query row;
// ops_attention_block.cpp: a block of rows), each the reference's arithmetic to the bit.
// Compiled per ISA level like every x86/ file: include only from x86/ translation units.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "lpx/kinds/quant_backend.h"

namespace lpx::kernels::LPX_X86_ISA::attention_parts {

inline std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// Writes the cache slot of every position in [first, n) to slot_words[t], as raw 32-bit words
// (the scratch is float storage; read them back with slot_at).
void gather_slots(const lpx_attention_args& args, std::size_t first, std::size_t n,
                  float* slot_words) noexcept;

inline std::size_t slot_at(const float* slot_words, std::size_t t) {
  std::uint32_t value;
  std::memcpy(&value, slot_words + t, sizeof value);
  return value;
}

// out = q rounded to f16 (the reference's q operand of the q.k dots), `dim` floats.
void round_query(const float* q, float* out, std::size_t dim) noexcept;

// Turns one head's scores w[first, n) into f16-rounded softmax weights, after the soft cap
// when there is one; [begin, first) and [n, round_up(n, 8)) become 0. begin: a multiple of 8
// at most first (the softmax sums groups of 8 aligned to position 0, as the reference does).
void softmax(float* w, std::size_t begin, std::size_t first, std::size_t n,
             float softcap) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA::attention_parts
