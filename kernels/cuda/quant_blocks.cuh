// The GGUF block formats decoded on the GPU, bit for bit as kernels/reference/dequantize*.cpp
// decodes them. Internal to gemv.cu.
//
// Each format is a struct with two decoders:
//
// - Units, the fast path (gemv, dequantize_rows_f16, embed_rows). A row is cut into units of
//   kGroups x 4 weights: one thread loads one unit of a block with a few wide loads (load), then
//   decodes it four consecutive columns at a time (decode(unit, g) gives the weights of columns
//   group_column(sub, g) .. + 3 of the block, as a float4). A unit is "sub" kUnitsPerBlock-th
//   of its block. The loads need the weight pointer aligned to kDataAlign bytes and row_bytes to
//   kRowAlign; for F32 / F16 / BF16 a "block" is a unit of 8 elements, so columns % 8 == 0.
// - element(row, c): one weight from any address, by byte loads: the fallback when the data or
//   the shape does not meet those conditions.
//
// Exactness. Every weight is computed with the reference's f32 operations in the reference's
// order, written as __f*_rn intrinsics so the compiler cannot fuse them. The exceptions are two
// final fused multiply-adds (Q4_1: d * q + m, Q4_K: scale * q - offset). They give the same bits
// as the separate operations because the product is exact in f32 (an f16 times a small integer
// has at most 24 significant bits), so the fused and the separate forms round the same exact
// sum once, signed zeros included (kernels/reference/dequantize.hpp says the same).
//
// Small integers become floats through the 2^23 trick: the f32 with bits 0x4B0000bb is exactly
// 2^23 + bb, so (2^23 + bb) - (2^23 + bias) is exactly float(bb - bias), +0 when equal, the
// same value float(int) gives, in one byte-permute and one subtract.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace lpx::kernels::cuda::quant {

// ---- loads ----------------------------------------------------------------------------------

__device__ __forceinline__ std::uint32_t load_u8(const std::uint8_t* p) { return __ldg(p); }

// A little-endian u16 / u32 from any address, byte by byte (the fallback path).
__device__ __forceinline__ std::uint32_t load_u16_bytes(const std::uint8_t* p) {
  return load_u8(p) | (load_u8(p + 1) << 8);
}
__device__ __forceinline__ std::uint32_t load_u32_bytes(const std::uint8_t* p) {
  return load_u16_bytes(p) | (load_u16_bytes(p + 2) << 16);
}

// A u16 from a 2-aligned address.
__device__ __forceinline__ std::uint32_t load_u16(const std::uint8_t* p) {
  return __ldg(reinterpret_cast<const unsigned short*>(p));
}

// A u32 from a 4-aligned address.
__device__ __forceinline__ std::uint32_t load_u32(const std::uint8_t* p) {
  return __ldg(reinterpret_cast<const unsigned int*>(p));
}

// N little-endian u32 words of the bytes p .. p + 4N - 1, where p is only 2-aligned (the blocks
// of 18, 22, 34 and 210 bytes): aligned 32-bit loads realigned with funnel shifts. When p is
// 2 mod 4 the first aligned word also holds the two bytes before p, so the 4-aligned word
// containing p - 2 must be readable: true when the weight data pointer is 4-aligned (kDataAlign).
// The last two bytes are then read by a 16-bit load, so nothing past p + 4N - 1 is read.
template <int N>
__device__ __forceinline__ void load_words_2_aligned(const std::uint8_t* p,
                                                     std::uint32_t (&out)[N]) {
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(p);
  const unsigned int* aligned =
      reinterpret_cast<const unsigned int*>(address & ~static_cast<std::uintptr_t>(3));
  const std::uint32_t shift = static_cast<std::uint32_t>(address & 2u) * 8u;  // 0 or 16
  std::uint32_t words[N + 1];
#pragma unroll
  for (int i = 0; i < N; ++i) words[i] = __ldg(aligned + i);
  words[N] = shift != 0 ? load_u16(p + 4 * N - 2) : 0u;
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = __funnelshift_r(words[i], words[i + 1], shift);
}

// ---- exact conversions ----------------------------------------------------------------------

// IEEE binary16 bits to f32, exactly as reference::f16_to_f32: the hardware conversion is exact
// for every finite value (subnormals included); infinities and NaNs are built by hand so a NaN
// keeps its sign and payload bits.
__device__ __forceinline__ float f16_to_f32(std::uint32_t bits) {
  const float value = __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xFFFFu)));
  if ((bits & 0x7C00u) != 0x7C00u) return value;
  return __uint_as_float(((bits & 0x8000u) << 16) | 0x7F800000u | ((bits & 0x3FFu) << 13));
}

__device__ __forceinline__ float bf16_to_f32(std::uint32_t bits) {
  return __uint_as_float((bits & 0xFFFFu) << 16);
}

// f32 to f16 bits as reference::f32_to_f16: round to nearest even (the hardware conversion, with
// the same overflow to infinity and subnormal results); a NaN becomes a quiet NaN with its sign
// and top payload bits.
__device__ __forceinline__ std::uint16_t f32_to_f16_bits(float value) {
  const std::uint32_t x = __float_as_uint(value);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) {
    return static_cast<std::uint16_t>(((x >> 16) & 0x8000u) | 0x7E00u | ((x >> 13) & 0x3FFu));
  }
  return __half_as_ushort(__float2half_rn(value));
}

// float(byte i of word) - kBias, exactly (the 2^23 trick above); bytes are below 256.
template <int kBias>
__device__ __forceinline__ float4 bytes_minus(std::uint32_t word) {
  constexpr float kMagic = 8388608.0f + static_cast<float>(kBias);  // 2^23 + bias, exact
  return make_float4(__fsub_rn(__uint_as_float(__byte_perm(word, 0x4B000000u, 0x7440u)), kMagic),
                     __fsub_rn(__uint_as_float(__byte_perm(word, 0x4B000000u, 0x7441u)), kMagic),
                     __fsub_rn(__uint_as_float(__byte_perm(word, 0x4B000000u, 0x7442u)), kMagic),
                     __fsub_rn(__uint_as_float(__byte_perm(word, 0x4B000000u, 0x7443u)), kMagic));
}

__device__ __forceinline__ float4 scaled(float4 q, float d) {  // d * q, each rounded once
  return make_float4(__fmul_rn(d, q.x), __fmul_rn(d, q.y), __fmul_rn(d, q.z), __fmul_rn(d, q.w));
}

// The four low (high = false) or high nibbles of the bytes of `word`, as bytes.
__device__ __forceinline__ std::uint32_t nibbles(std::uint32_t word, bool high) {
  return (high ? word >> 4 : word) & 0x0F0F0F0Fu;
}

// ---- 32-element formats ---------------------------------------------------------------------
// 2 units per block of 16 weights each, 4 groups of 4 columns per unit.

// Q8_0, 34 B: d f16 @0, q int8[32] @2; x[i] = float(q[i]) * d. Unit `sub`: elements 16 sub ..
// 16 sub + 15.
struct Q8_0 {
  static constexpr int kBlockElements = 32, kBlockBytes = 34, kUnitsPerBlock = 2, kGroups = 4;
  static constexpr int kDataAlign = 4, kRowAlign = 2;
  struct Unit {
    float d;
    std::uint32_t q[4];
  };
  __device__ static Unit load(const std::uint8_t* block, int sub) {
    Unit u;
    u.d = f16_to_f32(load_u16(block));
    load_words_2_aligned<4>(block + 2 + 16 * sub, u.q);
    return u;
  }
  __device__ static int group_column(int sub, int g) { return 16 * sub + 4 * g; }
  __device__ static float4 decode(const Unit& u, int g) {
    // int8 q + 128 is the byte with its top bit flipped.
    const float4 q = bytes_minus<128>(u.q[g] ^ 0x80808080u);
    return make_float4(__fmul_rn(q.x, u.d), __fmul_rn(q.y, u.d), __fmul_rn(q.z, u.d),
                       __fmul_rn(q.w, u.d));
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    const std::uint8_t* block = row + (c / 32) * kBlockBytes;
    const float d = f16_to_f32(load_u16_bytes(block));
    const int q = static_cast<std::int8_t>(load_u8(block + 2 + c % 32));
    return __fmul_rn(static_cast<float>(q), d);
  }
};

// 4-bit values: element j < 16 is the low nibble of qs[j], element j + 16 its high nibble. Unit
// `sub` holds qs[8 sub .. 8 sub + 7]; its groups: low nibbles of the two words (columns 8 sub,
// 8 sub + 4), then the high nibbles (16 + 8 sub, 16 + 8 sub + 4).
__device__ __forceinline__ int nibble_group_column(int sub, int g) {
  return 8 * sub + 4 * (g & 1) + 16 * (g >> 1);
}
__device__ __forceinline__ int nibble_of_element(const std::uint8_t* qs, int i) {
  const int byte = static_cast<int>(load_u8(qs + (i & 15)));
  return i < 16 ? byte & 0x0F : byte >> 4;
}

// Q4_0, 18 B: d f16 @0, qs[16] @2; x[i] = d * float(q[i] - 8).
struct Q4_0 {
  static constexpr int kBlockElements = 32, kBlockBytes = 18, kUnitsPerBlock = 2, kGroups = 4;
  static constexpr int kDataAlign = 4, kRowAlign = 2;
  struct Unit {
    float d;
    std::uint32_t qs[2];
  };
  __device__ static Unit load(const std::uint8_t* block, int sub) {
    Unit u;
    u.d = f16_to_f32(load_u16(block));
    load_words_2_aligned<2>(block + 2 + 8 * sub, u.qs);
    return u;
  }
  __device__ static int group_column(int sub, int g) { return nibble_group_column(sub, g); }
  __device__ static float4 decode(const Unit& u, int g) {
    return scaled(bytes_minus<8>(nibbles(u.qs[g & 1], g >= 2)), u.d);
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    const std::uint8_t* block = row + (c / 32) * kBlockBytes;
    const float d = f16_to_f32(load_u16_bytes(block));
    return __fmul_rn(d, static_cast<float>(nibble_of_element(block + 2, c % 32) - 8));
  }
};

// Q4_1, 20 B: d f16 @0, m f16 @2, qs[16] @4; x[i] = d * float(q[i]) + m. Blocks are 4-aligned.
struct Q4_1 {
  static constexpr int kBlockElements = 32, kBlockBytes = 20, kUnitsPerBlock = 2, kGroups = 4;
  static constexpr int kDataAlign = 4, kRowAlign = 4;
  struct Unit {
    float d, m;
    std::uint32_t qs[2];
  };
  __device__ static Unit load(const std::uint8_t* block, int sub) {
    Unit u;
    const std::uint32_t head = load_u32(block);
    u.d = f16_to_f32(head & 0xFFFFu);
    u.m = f16_to_f32(head >> 16);
    u.qs[0] = load_u32(block + 4 + 8 * sub);
    u.qs[1] = load_u32(block + 8 + 8 * sub);
    return u;
  }
  __device__ static int group_column(int sub, int g) { return nibble_group_column(sub, g); }
  __device__ static float4 decode(const Unit& u, int g) {
    const float4 q = bytes_minus<0>(nibbles(u.qs[g & 1], g >= 2));
    // Fused, and still d * q + m bit for bit: d * q is exact (see the top of the file).
    return make_float4(__fmaf_rn(u.d, q.x, u.m), __fmaf_rn(u.d, q.y, u.m), __fmaf_rn(u.d, q.z, u.m),
                       __fmaf_rn(u.d, q.w, u.m));
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    const std::uint8_t* block = row + (c / 32) * kBlockBytes;
    const float d = f16_to_f32(load_u16_bytes(block));
    const float m = f16_to_f32(load_u16_bytes(block + 2));
    const int q = nibble_of_element(block + 4, c % 32);
    return __fadd_rn(__fmul_rn(d, static_cast<float>(q)), m);
  }
};

// Q5_0, 22 B: d f16 @0, qh u32 @2, qs[16] @6; bit i of qh is bit 4 of element i;
// x[i] = d * float(q[i] - 16).
struct Q5_0 {
  static constexpr int kBlockElements = 32, kBlockBytes = 22, kUnitsPerBlock = 2, kGroups = 4;
  static constexpr int kDataAlign = 4, kRowAlign = 2;
  struct Unit {
    float d;
    std::uint32_t qh;  // shifted so that bit e is the fifth bit of element 8 sub + e
    std::uint32_t qs[2];
  };
  __device__ static Unit load(const std::uint8_t* block, int sub) {
    Unit u;
    u.d = f16_to_f32(load_u16(block));
    std::uint32_t qh[1];
    load_words_2_aligned<1>(block + 2, qh);
    u.qh = qh[0] >> (8 * sub);
    load_words_2_aligned<2>(block + 6 + 8 * sub, u.qs);
    return u;
  }
  __device__ static int group_column(int sub, int g) { return nibble_group_column(sub, g); }
  __device__ static float4 decode(const Unit& u, int g) {
    // The group's four fifth bits, one per byte: multiplying by 0x00204081 puts bit k of the
    // nibble at bit 8k (copies at shifts 0, 7, 14, 21 that never overlap), the mask keeps those.
    const std::uint32_t bits = (u.qh >> (4 * (g & 1) + 16 * (g >> 1))) & 0xFu;
    const std::uint32_t high = ((bits * 0x00204081u) & 0x01010101u) << 4;
    return scaled(bytes_minus<16>(nibbles(u.qs[g & 1], g >= 2) | high), u.d);
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    const std::uint8_t* block = row + (c / 32) * kBlockBytes;
    const int i = static_cast<int>(c % 32);
    const float d = f16_to_f32(load_u16_bytes(block));
    const std::uint32_t qh = load_u32_bytes(block + 2);
    const int q = nibble_of_element(block + 6, i) | static_cast<int>(((qh >> i) & 1u) << 4);
    return __fmul_rn(d, static_cast<float>(q - 16));
  }
};

// ---- 256-element K formats ------------------------------------------------------------------
// 16 units per block of 16 weights each, 4 groups of 4 columns per unit.

// The 6-bit scale and min of sub-block s (0..7) of Q4_K from its 12 scale bytes, as
// reference k_scale_and_min: bytes 0-3 hold the scales of sub-blocks 0-3 in their low 6 bits,
// bytes 4-7 the mins; sub-blocks 4-7 take their low 4 bits from bytes 8-11 (scale low nibble,
// min high nibble) and their top 2 bits from the top bits of bytes 0-3 (scales), 4-7 (mins).
// byte(j) returns scale byte j.
template <typename ByteAt>
__device__ __forceinline__ void k_scale_and_min(ByteAt byte, int s, int& scale, int& min) {
  if (s < 4) {
    scale = static_cast<int>(byte(s) & 0x3Fu);
    min = static_cast<int>(byte(s + 4) & 0x3Fu);
  } else {
    const std::uint32_t low = byte(s + 4);
    scale = static_cast<int>((low & 0x0Fu) | ((byte(s - 4) >> 6) << 4));
    min = static_cast<int>((low >> 4) | ((byte(s) >> 6) << 4));
  }
}

// Q4_K, 144 B: d f16 @0, dmin f16 @2, scales[12] @4, qs[128] @16. Sub-block s (32 elements) has
// x = (d * sc) * q - (dmin * m); sub-blocks 2p and 2p + 1 share qs[32p .. 32p + 31] (low, high
// nibbles). Unit sub = 4p + k holds qs[32p + 8k .. + 7]: elements 8k .. 8k + 7 of sub-blocks 2p
// (groups 0, 1) and 2p + 1 (groups 2, 3). Blocks are 16-aligned: one 16-byte load brings
// d, dmin and all the scales, one 8-byte load the unit's nibbles.
struct Q4_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 144, kUnitsPerBlock = 16, kGroups = 4;
  static constexpr int kDataAlign = 16, kRowAlign = 16;
  struct Unit {
    float scale[2], offset[2];  // d * sc and dmin * m of sub-blocks 2p, 2p + 1
    uint2 qs;
  };
  __device__ static Unit load(const std::uint8_t* block, int sub) {
    const uint4 head = __ldg(reinterpret_cast<const uint4*>(block));
    const float d = f16_to_f32(head.x & 0xFFFFu);
    const float dmin = f16_to_f32(head.x >> 16);
    // Scale byte j is byte 4 + j of the block: word 1 + j / 4 of head.
    const auto byte = [&head](int j) {
      const std::uint32_t word = j < 4 ? head.y : (j < 8 ? head.z : head.w);
      return (word >> (8 * (j & 3))) & 0xFFu;
    };
    Unit u;
    const int pair = sub >> 2;
#pragma unroll
    for (int t = 0; t < 2; ++t) {
      int sc = 0, m = 0;
      k_scale_and_min(byte, 2 * pair + t, sc, m);
      u.scale[t] = __fmul_rn(d, static_cast<float>(sc));
      u.offset[t] = __fmul_rn(dmin, static_cast<float>(m));
    }
    u.qs = __ldg(reinterpret_cast<const uint2*>(block + 16 + 32 * pair + 8 * (sub & 3)));
    return u;
  }
  __device__ static int group_column(int sub, int g) {
    return 64 * (sub >> 2) + 8 * (sub & 3) + 4 * (g & 1) + 32 * (g >> 1);
  }
  __device__ static float4 decode(const Unit& u, int g) {
    const float4 q = bytes_minus<0>(nibbles((g & 1) != 0 ? u.qs.y : u.qs.x, g >= 2));
    const float scale = u.scale[g >> 1], neg_offset = -u.offset[g >> 1];
    // Fused, and still scale * q - offset bit for bit: scale * q is exact.
    return make_float4(__fmaf_rn(scale, q.x, neg_offset), __fmaf_rn(scale, q.y, neg_offset),
                       __fmaf_rn(scale, q.z, neg_offset), __fmaf_rn(scale, q.w, neg_offset));
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    const std::uint8_t* block = row + (c / 256) * kBlockBytes;
    const int e = static_cast<int>(c % 256), s = e / 32, l = e % 32;
    const float d = f16_to_f32(load_u16_bytes(block));
    const float dmin = f16_to_f32(load_u16_bytes(block + 2));
    int sc = 0, m = 0;
    k_scale_and_min([block](int j) { return load_u8(block + 4 + j); }, s, sc, m);
    const float scale = __fmul_rn(d, static_cast<float>(sc));
    const float offset = __fmul_rn(dmin, static_cast<float>(m));
    const int q =
        static_cast<int>((load_u8(block + 16 + 32 * (s / 2) + l) >> (4 * (s % 2))) & 0xFu);
    return __fsub_rn(__fmul_rn(scale, static_cast<float>(q)), offset);
  }
};

// Q6_K, 210 B: ql[128] @0, qh[64] @128, scales int8[16] @192, d f16 @208; 16 sub-blocks of 16
// elements, x = (d * scale) * float(q - 32). Half H (128 elements) uses ql[64H ..] and
// qh[32H ..]; its element w takes its low 4 bits from ql[w % 64] (low nibble for w < 64) and its
// top 2 bits from qh[w % 32], bits 2 (w / 32). Unit sub = 8H + t covers l = 4t .. 4t + 3 of the
// half: group g is elements w = 32 g + l, from ql word A = ql[l] (g = 0, 2) or B = ql[32 + l]
// (g = 1, 3), low nibbles for g < 2, and qh bits 2g, 2g + 1.
struct Q6_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 210, kUnitsPerBlock = 16, kGroups = 4;
  static constexpr int kDataAlign = 4, kRowAlign = 2;
  struct Unit {
    float scale[4];  // d * scale of each group's sub-block
    std::uint32_t ql[2], qh;
  };
  __device__ static Unit load(const std::uint8_t* block, int sub) {
    const int half = sub >> 3, l = 4 * (sub & 7);
    Unit u;
    std::uint32_t word[1];
    load_words_2_aligned<1>(block + 64 * half + l, word);
    u.ql[0] = word[0];
    load_words_2_aligned<1>(block + 64 * half + 32 + l, word);
    u.ql[1] = word[0];
    load_words_2_aligned<1>(block + 128 + 32 * half + l, word);
    u.qh = word[0];
    std::uint32_t scales[2];  // scales[8 half .. 8 half + 7]
    load_words_2_aligned<2>(block + 192 + 8 * half, scales);
    const float d = f16_to_f32(load_u16(block + 208));
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      // Group g is sub-block (128 half + 32 g + l) / 16 = 8 half + 2 g + (l >= 16).
      const int j = 2 * g + (l >= 16 ? 1 : 0);
      const auto scale = static_cast<std::int8_t>((scales[j >> 2] >> (8 * (j & 3))) & 0xFFu);
      u.scale[g] = __fmul_rn(d, static_cast<float>(scale));
    }
    return u;
  }
  __device__ static int group_column(int sub, int g) {
    return 128 * (sub >> 3) + 4 * (sub & 7) + 32 * g;
  }
  __device__ static float4 decode(const Unit& u, int g) {
    const std::uint32_t low = nibbles(u.ql[g & 1], g >= 2);
    const std::uint32_t high = ((u.qh >> (2 * g)) & 0x03030303u) << 4;
    return scaled(bytes_minus<32>(low | high), u.scale[g]);
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    const std::uint8_t* block = row + (c / 256) * kBlockBytes;
    const int e = static_cast<int>(c % 256), half = e / 128, w = e % 128;
    const std::uint32_t ql = load_u8(block + 64 * half + w % 64);
    const std::uint32_t qh = load_u8(block + 128 + 32 * half + w % 32);
    const int low = static_cast<int>((ql >> (4 * (w / 64))) & 0x0Fu);
    const int high = static_cast<int>((qh >> (2 * (w / 32))) & 0x03u);
    const float d = f16_to_f32(load_u16_bytes(block + 208));
    const auto sc = static_cast<std::int8_t>(load_u8(block + 192 + e / 16));
    const float scale = __fmul_rn(d, static_cast<float>(sc));
    return __fmul_rn(scale, static_cast<float>((low | (high << 4)) - 32));
  }
};

// ---- float formats --------------------------------------------------------------------------
// A unit ("block") is 8 consecutive elements, 2 groups; its loads are 16-byte aligned.

struct F32 {
  static constexpr int kBlockElements = 8, kBlockBytes = 32, kUnitsPerBlock = 1, kGroups = 2;
  static constexpr int kDataAlign = 16, kRowAlign = 16;
  struct Unit {
    float4 v[2];
  };
  __device__ static Unit load(const std::uint8_t* block, int /*sub*/) {
    const auto* p = reinterpret_cast<const float4*>(block);
    return Unit{{__ldg(p), __ldg(p + 1)}};
  }
  __device__ static int group_column(int /*sub*/, int g) { return 4 * g; }
  __device__ static float4 decode(const Unit& u, int g) { return u.v[g]; }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    return __uint_as_float(load_u32_bytes(row + 4 * c));
  }
};

template <bool kBrain>  // false: IEEE f16, true: bfloat16
struct Float16Format {
  static constexpr int kBlockElements = 8, kBlockBytes = 16, kUnitsPerBlock = 1, kGroups = 2;
  static constexpr int kDataAlign = 16, kRowAlign = 16;
  struct Unit {
    uint4 raw;
  };
  __device__ static float convert(std::uint32_t bits) {
    return kBrain ? bf16_to_f32(bits) : f16_to_f32(bits);
  }
  __device__ static Unit load(const std::uint8_t* block, int /*sub*/) {
    return Unit{__ldg(reinterpret_cast<const uint4*>(block))};
  }
  __device__ static int group_column(int /*sub*/, int g) { return 4 * g; }
  __device__ static float4 decode(const Unit& u, int g) {
    const std::uint32_t a = g == 0 ? u.raw.x : u.raw.z, b = g == 0 ? u.raw.y : u.raw.w;
    return make_float4(convert(a & 0xFFFFu), convert(a >> 16), convert(b & 0xFFFFu),
                       convert(b >> 16));
  }
  __device__ static float element(const std::uint8_t* row, std::int64_t c) {
    return convert(load_u16_bytes(row + 2 * c));
  }
};
using F16 = Float16Format<false>;
using BF16 = Float16Format<true>;

}  // namespace lpx::kernels::cuda::quant
