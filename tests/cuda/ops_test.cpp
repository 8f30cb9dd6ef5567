// The decode-step CUDA kernels (kernels/cuda/ops.cu, attention.cu, sampling.cu) against
// kernels/reference on seeded random data. Skipped where no GPU is usable.
//
// Tolerances, each argued in the comment at the top of the kernel's file:
//   add_bias, add_in_place, kv_store, argmax, x after add_rms_norm's residual add: exact.
//   add_rms_norm output: within 2 ulp (the f32 mean is one ulp off only when the double sum
//     falls within n * 2^-53 of a rounding boundary).
//   swiglu: exact for the whole groups of 8; the n % 8 tail within 2 ulp (glibc's expf is not
//     always correctly rounded).
//   rope: within 2^-21 * (|x0| + |x1|) of the pair's inputs (cos and sin one ulp apart at most).
//   attention: against an exact (double) softmax over the same f16 operands, within
//     kAttentionNoise * sum_t w_t |v_t[d]|; against the reference, that plus the reference's own
//     rounding of each weight to f16: 2^-11 * sum_t w_t |v_t[d]| + 2^-25 * sum_t |v_t[d]|.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda/launch.hpp"
#include "gpu_test_support.hpp"
#include "lpx/kinds/quant_backend.h"
#include "reference/half_precision.hpp"
#include "reference/ops.hpp"

namespace lpx::kernels::cuda {
namespace {

using test::DeviceBuffer;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> normal(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  if (n > 0 && values[0] == 0.0f) values[0] = scale;  // never all zero
  return values;
}

::testing::AssertionResult cuda_ok(cudaError_t err) {
  if (err == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << cudaGetErrorName(err) << ": " << cudaGetErrorString(err);
}

// Launch errors first, then execution errors.
::testing::AssertionResult finished() {
  const cudaError_t launch = cudaGetLastError();
  return cuda_ok(launch != cudaSuccess ? launch : cudaDeviceSynchronize());
}

// Distance in ulps between two floats (0 for equal values, including +0 and -0).
std::int64_t ulps(float a, float b) {
  const auto ordered = [](float x) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(x));
    return bits < 0 ? std::int64_t{INT32_MIN} - bits : bits;
  };
  return std::abs(ordered(a) - ordered(b));
}

TEST(CudaOps, AddRmsNormAddsTheResidualExactlyAndNormalisesWithinTwoUlp) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(11);
  for (int n : {5, 576, 4096}) {
    const int rows = 3;
    const std::vector<float> x = normal(rng, std::size_t(rows) * n, 30.0f);
    const std::vector<float> residual = normal(rng, x.size(), 10.0f);
    const std::vector<float> weight = normal(rng, n, 1.0f);
    DeviceBuffer<float> d_x(x), d_residual(residual), d_weight(weight), d_out(x.size());
    add_rms_norm(d_x.get(), d_residual.get(), d_weight.get(), d_out.get(), rows, n, 1e-5f, nullptr);
    ASSERT_TRUE(finished());
    const std::vector<float> summed = d_x.download();
    const std::vector<float> out = d_out.download();
    // Then without a residual, in place.
    add_rms_norm(d_x.get(), nullptr, d_weight.get(), d_x.get(), rows, n, 1e-5f, nullptr);
    ASSERT_TRUE(finished());
    const std::vector<float> in_place = d_x.download();

    std::vector<float> expected(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(summed[i]),
                std::bit_cast<std::uint32_t>(x[i] + residual[i])) << "n " << n << " i " << i;
    }
    for (int r = 0; r < rows; ++r) {
      reference::rms_norm_row(summed.data() + std::size_t(r) * n, weight.data(),
                              expected.data() + std::size_t(r) * n, n, 1e-5f);
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(ulps(out[i], expected[i]), 2) << "n " << n << " i " << i;
      ASSERT_LE(ulps(in_place[i], expected[i]), 2) << "in place, n " << n << " i " << i;
    }
  }
}

TEST(CudaOps, AddBiasAndAddInPlaceAreExact) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(12);
  const int rows = 5;
  const int width = 897;
  const std::vector<float> x = normal(rng, std::size_t(rows) * width, 3.0f);
  const std::vector<float> y = normal(rng, x.size(), 3.0f);
  const std::vector<float> bias = normal(rng, width, 1.0f);
  DeviceBuffer<float> d_x(x), d_y(y), d_bias(bias);
  add_bias(d_x.get(), d_bias.get(), rows, width, nullptr);
  add_in_place(d_x.get(), d_y.get(), x.size(), nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> got = d_x.download();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float expected = (x[i] + bias[i % width]) + y[i];
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(expected)) << i;
  }
}

// The head's input: the output rows, in the order asked, copied bit for bit.
TEST(CudaOps, GatherRowsCopiesTheAskedRowsInOrder) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(20);
  const int rows = 9;
  const int width = 577;
  const std::vector<float> x = normal(rng, std::size_t(rows) * width, 3.0f);
  const std::vector<std::int32_t> wanted = {8, 0, 3, 3};
  DeviceBuffer<float> d_x(x), d_out(wanted.size() * width);
  DeviceBuffer<std::int32_t> d_rows(wanted);
  gather_rows(d_x.get(), d_rows.get(), static_cast<int>(wanted.size()), width, d_out.get(), nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> got = d_out.download();
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    for (int j = 0; j < width; ++j) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i * width + j]),
                std::bit_cast<std::uint32_t>(x[static_cast<std::size_t>(wanted[i]) * width + j]))
          << i << "," << j;
    }
  }
}

TEST(CudaOps, SwigluIsExactOnWholeGroupsOfEightAndWithinTwoUlpOnTheTail) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(13);
  const std::size_t n = 8 * 397 + 5;
  std::vector<float> gate = normal(rng, n, 4.0f);
  gate[1] = -90.0f;  // exp overflows: silu is -0
  gate[2] = 90.0f;
  const std::vector<float> up = normal(rng, n, 1.0f);
  std::vector<float> expected(n);
  reference::swiglu(gate.data(), up.data(), expected.data(), n);

  DeviceBuffer<float> d_gate(gate), d_up(up), d_out(n);
  swiglu(d_gate.get(), d_up.get(), d_out.get(), n, nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> out = d_out.download();
  swiglu(d_gate.get(), d_up.get(), d_gate.get(), n, nullptr);  // out aliasing gate
  ASSERT_TRUE(finished());
  const std::vector<float> in_place = d_gate.download();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t allowed = i < n - n % 8 ? 0 : 2;
    ASSERT_LE(ulps(out[i], expected[i]), allowed) << i << ": " << out[i] << " vs " << expected[i];
    ASSERT_EQ(std::bit_cast<std::uint32_t>(in_place[i]), std::bit_cast<std::uint32_t>(out[i])) << i;
  }
}

TEST(CudaOps, RopeMatchesReferenceInBothModes) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(14);
  const int rows = 4;
  const int heads = 9;
  const int head_dim = 64;
  const std::vector<std::int32_t> positions = {0, 1, 777, 32767};
  std::vector<float> factors(head_dim / 2);
  for (float& f : factors) f = std::uniform_real_distribution<float>(1.0f, 8.0f)(rng);
  DeviceBuffer<std::int32_t> d_positions(positions);
  DeviceBuffer<float> d_factors(factors);

  for (int mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    for (int n_rot : {head_dim, head_dim / 2}) {
      for (bool with_factors : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "mode " << mode << " n_rot " << n_rot
                                          << " factors " << with_factors);
        const std::vector<float> x = normal(rng, std::size_t(rows) * heads * head_dim, 2.0f);
        RopeArgs args;
        args.mode = mode;
        args.n_rot = n_rot;
        args.freq_base = with_factors ? 500000.0f : 10000.0f;
        args.freq_scale = with_factors ? 1.0f : 0.25f;
        args.freq_factors = with_factors ? d_factors.get() : nullptr;
        DeviceBuffer<float> d_x(x);
        rope(d_x.get(), rows, heads, head_dim, d_positions.get(), args, nullptr);
        ASSERT_TRUE(finished());
        const std::vector<float> got = d_x.download();

        lpx_rope_params params{};
        params.struct_size = sizeof params;
        params.mode = mode;
        params.n_rot = static_cast<std::uint32_t>(n_rot);
        params.freq_base = args.freq_base;
        params.freq_scale = args.freq_scale;
        params.freq_factors = with_factors ? factors.data() : nullptr;
        std::vector<float> expected = x;
        for (int r = 0; r < rows; ++r) {
          reference::rope_row(expected.data() + std::size_t(r) * heads * head_dim, heads,
                              head_dim, positions[r], params);
        }
        const int pairs = n_rot / 2;
        for (std::size_t h = 0; h < std::size_t(rows) * heads; ++h) {
          const std::size_t base = h * head_dim;
          for (int i = 0; i < pairs; ++i) {
            const std::size_t a = base + (mode == LPX_ROPE_NEOX ? i : 2 * i);
            const std::size_t b = base + (mode == LPX_ROPE_NEOX ? i + pairs : 2 * i + 1);
            const float tolerance = std::ldexp(std::fabs(x[a]) + std::fabs(x[b]), -21);
            ASSERT_NEAR(got[a], expected[a], tolerance) << "head " << h << " pair " << i;
            ASSERT_NEAR(got[b], expected[b], tolerance) << "head " << h << " pair " << i;
          }
          for (int d = n_rot; d < head_dim; ++d) {  // past n_rot: untouched
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got[base + d]),
                      std::bit_cast<std::uint32_t>(x[base + d]));
          }
        }
      }
    }
  }
}

TEST(CudaOps, KvStoreRoundsLikeTheReferenceAndSkipsNegativeSlots) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(15);
  const int rows = 5;
  const int width = 3 * 64;
  const int slots_total = 4 * 16;
  const std::vector<std::int32_t> slots = {37, 2, 63, -1, 16};
  std::vector<float> k = normal(rng, std::size_t(rows) * width, 2.0f);
  std::vector<float> v = normal(rng, k.size(), 2.0f);
  // Row 0 of k: zeros, infinities, NaNs with payloads, overflow, subnormals and exact ties.
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN,
                            std::bit_cast<float>(0x7FA12345u), std::bit_cast<float>(0xFFC00001u),
                            65504.0f, 65519.0f, 65520.0f, -1e6f, 1e-8f, 5.96e-8f,
                            std::ldexp(1.5f, -24), std::ldexp(2.5f, -24),
                            1.0f + std::ldexp(1.0f, -11),
                            1.0f + std::ldexp(3.0f, -11), std::ldexp(1.0f, -14), 6.1e-5f};
  std::copy(std::begin(specials), std::end(specials), k.begin());
  std::copy(std::begin(specials), std::end(specials), v.begin() + width);  // row 1 of v

  constexpr std::uint16_t kUntouched = 0xABCD;
  const std::vector<std::uint16_t> pool(std::size_t(slots_total) * width, kUntouched);
  DeviceBuffer<float> d_k(k), d_v(v);
  DeviceBuffer<std::uint16_t> d_k_pool(pool), d_v_pool(pool);
  DeviceBuffer<std::int32_t> d_slots(slots);
  kv_store(d_k.get(), d_v.get(), d_k_pool.get(), d_v_pool.get(), d_slots.get(), rows, width,
           nullptr);
  ASSERT_TRUE(finished());
  const std::vector<std::uint16_t> k_pool = d_k_pool.download();
  const std::vector<std::uint16_t> v_pool = d_v_pool.download();

  std::vector<std::uint16_t> k_expected = pool;
  std::vector<std::uint16_t> v_expected = pool;
  for (int r = 0; r < rows; ++r) {
    if (slots[r] < 0) continue;
    for (int i = 0; i < width; ++i) {
      const std::size_t at = std::size_t(slots[r]) * width + i;
      k_expected[at] = reference::f32_to_f16(k[std::size_t(r) * width + i]);
      v_expected[at] = reference::f32_to_f16(v[std::size_t(r) * width + i]);
    }
  }
  for (std::size_t i = 0; i < pool.size(); ++i) {
    ASSERT_EQ(k_pool[i], k_expected[i]) << "k element " << i;
    ASSERT_EQ(v_pool[i], v_expected[i]) << "v element " << i;
  }
}

// The lowest index of the largest value; NaN ranks below everything.
std::int32_t host_argmax(const float* row, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    const bool best_nan = std::isnan(row[best]);
    if (!std::isnan(row[i]) && (best_nan || row[i] > row[best])) best = i;
  }
  return best;
}

TEST(CudaOps, ArgmaxRowsTakesTheLowestIndexOfTheMaximumAndRanksNanLowest) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(16);
  for (int n : {1, 37, 256, 151936}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    const int rows = 7;
    std::vector<float> logits = normal(rng, std::size_t(rows) * n, 5.0f);
    const auto at = [&](int r, int i) -> float& { return logits[std::size_t(r) * n + i]; };
    const int last = n - 1;
    // Row 0: random. Row 1: the maximum twice. Row 2: NaNs around a maximum.
    // Row 3: all NaN. Row 4: all -inf. Row 5: all equal (+0 and -0). Row 6: max at the end.
    at(1, last) = 100.0f;
    at(1, n / 3) = 100.0f;
    for (int i = 0; i < n; i += 3) at(2, i) = kNaN;
    at(2, n / 2) = 50.0f;
    for (int i = 0; i < n; ++i) at(3, i) = i % 2 ? kNaN : -kNaN;
    for (int i = 0; i < n; ++i) at(4, i) = -kInf;
    for (int i = 0; i < n; ++i) at(5, i) = i % 2 ? 0.0f : -0.0f;
    at(6, last) = 1e30f;
    DeviceBuffer<float> d_logits(logits);
    DeviceBuffer<std::int32_t> d_out(rows);
    argmax_rows(d_logits.get(), rows, n, d_out.get(), nullptr);
    ASSERT_TRUE(finished());
    const std::vector<std::int32_t> out = d_out.download();
    for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], host_argmax(&at(r, 0), n)) << "row " << r;
  }
}

// --- attention --------------------------------------------------------------------------------

// Relative f32 noise allowed against the exact softmax: summation order in q.k (a few ulp of
// sum |q k|, moving the weights by ~1e-6) and in the chunked sums over V. A host emulation of
// the kernel's arithmetic stayed below 1.5% of this on the cases below; one position too many
// or too few moves an output by ~1/n, far above it.
constexpr double kAttentionNoise = 1e-5;

struct AttentionCase {
  const char* name;
  int n_heads, n_kv_heads, head_dim, block_size, split_positions, max_positions;
  std::vector<std::vector<std::int32_t>> sequences;  // per sequence: its rows' positions
};

// Several sequences' K/V in one paged pool: blocks handed out in shuffled order, every slot no
// position owns (and every block-table entry past a sequence's end) pointing at NaN, so reading
// outside a sequence poisons the output.
class PagedAttention {
 public:
  PagedAttention(const AttentionCase& c, std::mt19937& rng) : c_(c) {
    int blocks = 1;  // block 0 of the shuffle stays a NaN spare
    for (const auto& rows : c.sequences) {
      const int length = *std::max_element(rows.begin(), rows.end()) + 1;
      stride_ = std::max(stride_, (length + c.block_size - 1) / c.block_size);
      blocks += (length + c.block_size - 1) / c.block_size + 1;  // a spare after each
    }
    std::vector<std::int32_t> order(blocks);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const std::size_t slot_elements = std::size_t(c.n_kv_heads) * c.head_dim;
    k_.assign(std::size_t(blocks) * c.block_size * slot_elements, 0x7E00);
    v_ = k_;
    tables_.assign(c.sequences.size() * stride_, order[0]);
    int next = 1;
    for (std::size_t s = 0; s < c.sequences.size(); ++s) {
      const auto& rows = c.sequences[s];
      const int length = *std::max_element(rows.begin(), rows.end()) + 1;
      for (int b = 0; b * c.block_size < length; ++b) tables_[s * stride_ + b] = order[next++];
      ++next;
      for (int t = 0; t < length; ++t) {
        const std::size_t block = std::size_t(tables_[s * stride_ + t / c.block_size]);
        const std::size_t base = (block * c.block_size + t % c.block_size) * slot_elements;
        const std::vector<float> kt = normal(rng, slot_elements, 1.5f);
        const std::vector<float> vt = normal(rng, slot_elements, 1.0f);
        for (std::size_t i = 0; i < slot_elements; ++i) {
          k_[base + i] = reference::f32_to_f16(kt[i]);
          v_[base + i] = reference::f32_to_f16(vt[i]);
        }
      }
      for (std::int32_t p : rows) {
        positions_.push_back(p);
        row_sequence_.push_back(static_cast<std::int32_t>(s));
      }
    }
    q_ = normal(rng, positions_.size() * c.n_heads * c.head_dim, 1.0f);
    d_q_ = DeviceBuffer<float>(q_);
    d_out_ = DeviceBuffer<float>(std::vector<float>(q_.size(), kNaN));
    d_positions_ = DeviceBuffer<std::int32_t>(positions_);
    d_row_sequence_ = DeviceBuffer<std::int32_t>(row_sequence_);
    d_tables_ = DeviceBuffer<std::int32_t>(tables_);
    d_k_ = DeviceBuffer<std::uint16_t>(k_);
    d_v_ = DeviceBuffer<std::uint16_t>(v_);
    d_partial_ = DeviceBuffer<float>(attention_partial_floats(
        rows(), c.n_heads, c.head_dim, c.max_positions, c.split_positions));
  }

  int rows() const { return static_cast<int>(positions_.size()); }

  AttentionArgs args() const {
    AttentionArgs a;
    a.q = d_q_.get();
    a.out = d_out_.get();
    a.positions = d_positions_.get();
    a.row_sequence = d_row_sequence_.get();
    a.block_tables = d_tables_.get();
    a.block_table_stride = stride_;
    a.n_rows = rows();
    a.n_heads = c_.n_heads;
    a.n_kv_heads = c_.n_kv_heads;
    a.head_dim = c_.head_dim;
    a.scale = 1.0f / std::sqrt(static_cast<float>(c_.head_dim));
    a.k_pool = d_k_.get();
    a.v_pool = d_v_.get();
    a.block_size = c_.block_size;
    a.max_positions = c_.max_positions;
    a.split_positions = c_.split_positions;
    a.partial = d_partial_.get();
    return a;
  }

  // New positions for the same rows (each within its sequence's cache), on the device too.
  void move_rows(std::mt19937& rng) {
    for (std::size_t r = 0; r < positions_.size(); ++r) {
      const auto& rows = c_.sequences[row_sequence_[r]];
      const int length = *std::max_element(rows.begin(), rows.end()) + 1;
      positions_[r] = std::uniform_int_distribution<std::int32_t>(0, length - 1)(rng);
    }
    d_positions_.upload(positions_);
  }

  // The device output against the reference (one call per sequence, as the engine makes it)
  // and against an exact softmax in double over the same f16-rounded q, k and v.
  void check() const {
    const std::vector<float> got = d_out_.download();
    const std::size_t dim = c_.head_dim;
    const std::size_t row_floats = std::size_t(c_.n_heads) * dim;
    std::vector<float> expected(got.size());
    const std::int32_t last = *std::max_element(positions_.begin(), positions_.end());
    std::vector<float> scratch(reference::attention_scratch_floats(std::uint32_t(last) + 1));
    for (std::size_t s = 0; s < c_.sequences.size(); ++s) {
      std::vector<std::uint32_t> rows;
      for (std::size_t r = 0; r < positions_.size(); ++r) {
        if (row_sequence_[r] == static_cast<std::int32_t>(s)) rows.push_back(std::uint32_t(r));
      }
      std::vector<float> q, out(rows.size() * row_floats);
      std::vector<std::int32_t> positions;
      for (std::uint32_t r : rows) {
        q.insert(q.end(), q_.begin() + r * row_floats, q_.begin() + (r + 1) * row_floats);
        positions.push_back(positions_[r]);
      }
      lpx_attention_args a{};
      a.struct_size = sizeof a;
      a.q = q.data();
      a.out = out.data();
      a.positions = positions.data();
      a.n_rows = static_cast<std::uint32_t>(rows.size());
      a.n_heads = c_.n_heads;
      a.n_kv_heads = c_.n_kv_heads;
      a.head_dim = c_.head_dim;
      a.scale = args().scale;
      a.k_cache = k_.data();
      a.v_cache = v_.data();
      a.block_table = tables_.data() + s * stride_;
      a.block_size = c_.block_size;
      for (std::uint32_t i = 0; i < rows.size(); ++i) {
        reference::attention_row(a, i, 0, a.n_heads, scratch.data());
      }
      for (std::size_t i = 0; i < rows.size(); ++i) {
        std::copy_n(out.begin() + i * row_floats, row_floats,
                    expected.begin() + rows[i] * row_floats);
      }
    }

    const int group = c_.n_heads / c_.n_kv_heads;
    double worst_exact = 0.0;
    double worst_reference = 0.0;
    for (std::size_t r = 0; r < positions_.size(); ++r) {
      const std::size_t n = std::size_t(positions_[r]) + 1;
      const std::size_t stride = static_cast<std::size_t>(stride_);
      const std::int32_t* table = tables_.data() + std::size_t(row_sequence_[r]) * stride;
      for (int h = 0; h < c_.n_heads; ++h) {
        const float* q = q_.data() + r * row_floats + h * dim;
        const auto cache = [&](const std::vector<std::uint16_t>& pool, std::size_t t) {
          const std::size_t slot = std::size_t(table[t / c_.block_size]) * c_.block_size +
                                   t % c_.block_size;
          return pool.data() + (slot * c_.n_kv_heads + h / group) * dim;
        };
        std::vector<double> w(n);
        for (std::size_t t = 0; t < n; ++t) {
          double dot = 0.0;
          for (std::size_t d = 0; d < dim; ++d) {
            dot += double(reference::f16_to_f32(reference::f32_to_f16(q[d]))) *
                   double(reference::f16_to_f32(cache(k_, t)[d]));
          }
          w[t] = dot * double(args().scale);
        }
        const double max = *std::max_element(w.begin(), w.end());
        double sum = 0.0;
        for (double& x : w) sum += (x = std::exp(x - max));
        for (std::size_t d = 0; d < dim; ++d) {
          double exact = 0.0, weighted_abs = 0.0, abs = 0.0;
          for (std::size_t t = 0; t < n; ++t) {
            const double v = reference::f16_to_f32(cache(v_, t)[d]);
            exact += w[t] / sum * v;
            weighted_abs += w[t] / sum * std::fabs(v);
            abs += std::fabs(v);
          }
          const std::size_t at = r * row_floats + h * dim + d;
          const double noise = kAttentionNoise * weighted_abs + 1e-6;
          const double f16_weights = std::ldexp(weighted_abs, -11) + std::ldexp(abs, -25);
          const double error_exact = std::fabs(double(got[at]) - exact);
          const double error_reference = std::fabs(double(got[at]) - double(expected[at]));
          worst_exact = std::max(worst_exact, error_exact / noise);
          worst_reference = std::max(worst_reference, error_reference / (noise + f16_weights));
          ASSERT_LE(error_exact, noise) << "row " << r << " head " << h << " dim " << d
                                        << ": got " << got[at] << ", exact " << exact;
          ASSERT_LE(error_reference, noise + f16_weights)
              << "row " << r << " head " << h << " dim " << d << ": got " << got[at]
              << ", reference " << expected[at];
        }
      }
    }
    std::printf("[ %s ] worst error / bound: %.3f vs exact, %.3f vs reference\n", c_.name,
                worst_exact, worst_reference);
  }

 private:
  AttentionCase c_;
  int stride_ = 1;
  std::vector<std::int32_t> tables_, positions_, row_sequence_;
  std::vector<std::uint16_t> k_, v_;
  std::vector<float> q_;
  DeviceBuffer<float> d_q_, d_out_, d_partial_;
  DeviceBuffer<std::int32_t> d_positions_, d_row_sequence_, d_tables_;
  DeviceBuffer<std::uint16_t> d_k_, d_v_;
};

// Prefill-like runs of rows, single decode rows, position 0, chunk edges, several chunks merged,
// chunks left empty, GQA groups below, at and above the kernel's 8-head slice, every head_dim.
const AttentionCase kAttentionCases[] = {
    {"gqa9x3_d64", 9, 3, 64, 16, 256, 1024, {{990, 991, 992, 993}, {517}, {0, 1, 2}, {255, 256}}},
    {"gqa32x8_d128", 32, 8, 128, 16, 128, 1000, {{999}, {600, 601, 602}, {127, 128}}},
    {"gqa4x2_d80", 4, 2, 80, 32, 64, 300, {{299}, {40, 41}, {63, 64}}},
    {"mqa16_d96", 16, 1, 96, 16, 256, 512, {{511}, {3}}},
    {"mha4_d256", 4, 4, 256, 8, 256, 600, {{599, 300}, {7}}},
    // Rows past max_positions: the last chunk takes the rest.
    {"past_max_positions", 6, 2, 64, 16, 64, 128, {{300, 301}, {127}}},
    // Head sizes without a flash-decoding instantiation: the generic kernel (tiny models).
    {"generic_d4", 2, 2, 4, 16, 256, 64, {{40, 41, 42}, {0}}},
    {"generic_gqa4x2_d72", 4, 2, 72, 16, 256, 128, {{100}, {15, 16}}},
};

TEST(CudaAttention, MatchesReferenceAndExactSoftmax) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(17);
  for (const AttentionCase& c : kAttentionCases) {
    SCOPED_TRACE(c.name);
    PagedAttention attention_case(c, rng);
    attention(attention_case.args(), nullptr);
    ASSERT_TRUE(finished());
    attention_case.check();
  }
}

// Captured once, replayed after the positions change on the device: the launch configuration
// must not depend on device data.
TEST(CudaAttention, CapturedGraphFollowsNewPositions) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(18);
  PagedAttention attention_case(kAttentionCases[1], rng);
  cudaStream_t stream = nullptr;
  ASSERT_TRUE(cuda_ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_TRUE(cuda_ok(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal)));
  attention(attention_case.args(), stream);
  ASSERT_TRUE(cuda_ok(cudaStreamEndCapture(stream, &graph)));
  ASSERT_TRUE(cuda_ok(cudaGraphInstantiate(&exec, graph, 0)));
  for (int replay = 0; replay < 3; ++replay) {
    SCOPED_TRACE(replay);
    if (replay > 0) attention_case.move_rows(rng);
    ASSERT_TRUE(cuda_ok(cudaGraphLaunch(exec, stream)));
    ASSERT_TRUE(cuda_ok(cudaStreamSynchronize(stream)));
    attention_case.check();
  }
  EXPECT_TRUE(cuda_ok(cudaGraphExecDestroy(exec)));
  EXPECT_TRUE(cuda_ok(cudaGraphDestroy(graph)));
  EXPECT_TRUE(cuda_ok(cudaStreamDestroy(stream)));
}

TEST(CudaAttention, RejectsAnUnsupportedHeadDimThroughTheLaunchError) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(19);
  PagedAttention attention_case(kAttentionCases[0], rng);
  AttentionArgs args = attention_case.args();
  args.head_dim = 2000;  // beyond even the generic kernel's 1024
  ASSERT_TRUE(finished());
  attention(args, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_TRUE(finished());  // not sticky
}

}  // namespace
}  // namespace lpx::kernels::cuda
