// Paged flash-decoding attention (kernels/cuda/attention.cu, and attention_generic.cu for other
// head sizes) against kernels/reference on seeded random data. Skipped where no GPU is usable.
//
// Tolerance: against an exact (double) softmax over the same f16 operands, within
// kAttentionNoise * sum_t w_t |v_t[d]|; against the reference, that plus the reference's own
// rounding of each weight to f16: 2^-11 * sum_t w_t |v_t[d]| + 2^-25 * sum_t |v_t[d]|.
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

using test::cuda_ok;
using test::DeviceBuffer;
using test::finished;
using test::normal;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Relative f32 noise allowed against the exact softmax: summation order in q.k (a few ulp of
// sum |q k|, moving the weights by ~1e-6) and in the chunked sums over V. A host emulation of
// the kernel's arithmetic stayed below 1.5% of this on the cases below; one position too many
// or too few moves an output by ~1/n, far above it.
constexpr double kAttentionNoise = 1e-5;

struct AttentionCase {
  const char* name;
  int n_heads, n_kv_heads, head_dim, block_size;
  int splits;  // the most chunks a row is cut into (attention.cu)
  std::vector<std::vector<std::int32_t>> sequences;  // per sequence: its rows' positions
  int window = 0;        // attended positions (0: all)
  float softcap = 0.0f;  // > 0: scores bent to softcap * tanh(score / softcap)
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
    d_partial_ = DeviceBuffer<float>(
        std::max<std::size_t>(1, attention_partial_floats(rows(), c.n_heads, c.head_dim, c.splits)));
    d_counters_ = DeviceBuffer<std::uint32_t>(
        std::vector<std::uint32_t>(static_cast<std::size_t>(rows()) * c.n_kv_heads, 0u));
  }

  void clear_output() { d_out_.upload(std::vector<float>(q_.size(), kNaN)); }

  // The chunk counters are left zero by every call (the next one relies on it).
  bool counters_are_zero() const {
    for (const std::uint32_t c : d_counters_.download()) {
      if (c != 0) return false;
    }
    return true;
  }

  int rows() const { return static_cast<int>(positions_.size()); }
  std::vector<float> output() const { return d_out_.download(); }
  std::size_t row_floats() const { return std::size_t(c_.n_heads) * c_.head_dim; }

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
    a.window = c_.window;
    a.softcap = c_.softcap;
    a.k_pool = d_k_.get();
    a.v_pool = d_v_.get();
    a.block_size = c_.block_size;
    a.splits = c_.splits;
    a.partial = d_partial_.get();
    a.chunk_counters = d_counters_.get();
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
      a.window = static_cast<std::uint32_t>(c_.window);
      a.softcap = c_.softcap;
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
      const std::size_t first = reference::first_attended(positions_[r], std::uint32_t(c_.window));
      const std::size_t stride = static_cast<std::size_t>(stride_);
      const std::int32_t* table = tables_.data() + std::size_t(row_sequence_[r]) * stride;
      for (int h = 0; h < c_.n_heads; ++h) {
        const float* q = q_.data() + r * row_floats + h * dim;
        const auto cache = [&](const std::vector<std::uint16_t>& pool, std::size_t t) {
          const std::size_t slot = std::size_t(table[t / c_.block_size]) * c_.block_size +
                                   t % c_.block_size;
          return pool.data() + (slot * c_.n_kv_heads + h / group) * dim;
        };
        std::vector<double> w(n, -INFINITY);  // positions before the window weigh 0
        for (std::size_t t = first; t < n; ++t) {
          double dot = 0.0;
          for (std::size_t d = 0; d < dim; ++d) {
            dot += double(reference::f16_to_f32(reference::f32_to_f16(q[d]))) *
                   double(reference::f16_to_f32(cache(k_, t)[d]));
          }
          w[t] = dot * double(args().scale);
          if (c_.softcap > 0.0f) w[t] = double(c_.softcap) * std::tanh(w[t] / double(c_.softcap));
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
  DeviceBuffer<std::uint32_t> d_counters_;
  DeviceBuffer<std::int32_t> d_positions_, d_row_sequence_, d_tables_;
  DeviceBuffer<std::uint16_t> d_k_, d_v_;
};

// Prefill-like runs of rows, single decode rows, position 0, chunk edges, many chunks merged,
// splits left unused, chunks shorter than the rest, GQA groups below, at and above the
// kernel's 8-head slice, every head_dim. With `splits` S a row attending n positions runs
// ceil(n / L) chunks of L = roundup(ceil(n / S), 32) positions.
const AttentionCase kAttentionCases[] = {
    // 990 positions in 31 chunks of 32; 517 in 17; position 0 in one (no merge).
    {"gqa9x3_d64", 9, 3, 64, 16, 64, {{990, 991, 992, 993}, {517}, {0, 1, 2}, {255, 256}}},
    {"gqa32x8_d128", 32, 8, 128, 16, 33, {{999}, {600, 601, 602}, {127, 128}}},
    // 300 positions, 4 splits: chunks of 96, the last one of 12.
    {"gqa4x2_d80", 4, 2, 80, 32, 4, {{299}, {40, 41}, {63, 64}}},
    {"mqa16_d96", 16, 1, 96, 16, 64, {{511}, {3}}},
    {"mha4_d256", 4, 4, 256, 8, 2, {{599, 300}, {7}}},
    // One split: every row in one block, nothing merged (no scratch needed).
    {"one_split", 6, 2, 64, 16, 1, {{300, 301}, {127}}},
    // Head sizes without a flash-decoding instantiation: the generic kernel (tiny models).
    {"generic_d4", 2, 2, 4, 16, 64, {{40, 41, 42}, {0}}},
    {"generic_gqa4x2_d72", 4, 2, 72, 16, 64, {{100}, {15, 16}}},
    // Sliding windows (Gemma, Phi-3): chunks start at the window's first position; rows
    // shorter than the window, windows cut into many chunks or kept in one.
    {"window_d64", 8, 2, 64, 16, 8, {{990, 991}, {517}, {100}, {30}}, 100},
    {"window_many_splits", 4, 2, 64, 16, 64, {{191, 192}, {127}}, 128},
    {"window_one_split", 6, 2, 64, 16, 1, {{300, 301}, {127}}, 40},
    // A soft cap that bends (Gemma 2), alone and with a window.
    {"softcap_d256", 8, 4, 256, 16, 16, {{700}, {300, 301}, {10}}, 0, 1.0f},
    {"window_softcap_d128", 8, 8, 128, 16, 3, {{900}, {255, 256}}, 300, 0.5f},
    {"generic_window_softcap_d4", 2, 2, 4, 16, 64, {{40, 41, 42}, {0}}, 10, 0.5f},
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
    EXPECT_TRUE(attention_case.counters_are_zero());
    // Again on the same counters (the output cleared first): the same result.
    attention_case.clear_output();
    attention(attention_case.args(), nullptr);
    ASSERT_TRUE(finished());
    attention_case.check();
  }
}

// Captured once, replayed after the positions change on the device: the launch configuration
// must not depend on device data.
// Once plain, once windowed (the chunks before a window exit, whichever they are).
TEST(CudaAttention, CapturedGraphFollowsNewPositions) {
  LPX_REQUIRE_GPU();
  AttentionCase windowed = kAttentionCases[1];
  windowed.window = 300;
  for (const AttentionCase& c : {kAttentionCases[1], windowed}) {
    SCOPED_TRACE(c.window);
    std::mt19937 rng(18);
    PagedAttention attention_case(c, rng);
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
      EXPECT_TRUE(attention_case.counters_are_zero());
    }
    EXPECT_TRUE(cuda_ok(cudaGraphExecDestroy(exec)));
    EXPECT_TRUE(cuda_ok(cudaGraphDestroy(graph)));
    EXPECT_TRUE(cuda_ok(cudaStreamDestroy(stream)));
  }
}

// A row's chunks depend on its own positions and the split count only: the same row run alone
// gives the same bits as in a batch (so an answer does not change with the server's load).
TEST(CudaAttention, ARowGivesTheSameBitsAloneAsInABatch) {
  LPX_REQUIRE_GPU();
  for (const AttentionCase& c : {kAttentionCases[0], kAttentionCases[8]}) {
    SCOPED_TRACE(c.name);
    std::mt19937 rng(21);
    PagedAttention attention_case(c, rng);
    attention(attention_case.args(), nullptr);
    ASSERT_TRUE(finished());
    const std::vector<float> batched = attention_case.output();
    const std::size_t width = attention_case.row_floats();
    for (int r = 0; r < attention_case.rows(); ++r) {
      SCOPED_TRACE(r);
      attention_case.clear_output();
      AttentionArgs alone = attention_case.args();
      alone.q += std::size_t(r) * width;
      alone.out += std::size_t(r) * width;
      alone.positions += r;
      alone.row_sequence += r;
      alone.n_rows = 1;
      attention(alone, nullptr);
      ASSERT_TRUE(finished());
      const std::vector<float> got = attention_case.output();
      for (std::size_t i = 0; i < width; ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[r * width + i]),
                  std::bit_cast<std::uint32_t>(batched[r * width + i]))
            << "output " << i;
      }
    }
    EXPECT_TRUE(attention_case.counters_are_zero());
  }
}

// Splits outside 1..kMaxAttentionSplits, or several without scratch, are refused.
TEST(CudaAttention, RejectsBadSplitsThroughTheLaunchError) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(22);
  PagedAttention attention_case(kAttentionCases[0], rng);
  for (const int splits : {0, kMaxAttentionSplits + 1}) {
    AttentionArgs args = attention_case.args();
    args.splits = splits;
    ASSERT_TRUE(finished());
    attention(args, nullptr);
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration) << splits;
  }
  AttentionArgs args = attention_case.args();
  args.partial = nullptr;
  attention(args, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  EXPECT_TRUE(finished());
}

TEST(CudaAttention, SplitsFillTheGpuAtBatchOne) {
  // Two blocks per SM over the kv heads, within 1..kMaxAttentionSplits (no GPU needed).
  EXPECT_EQ(attention_splits(132, 3), 64);   // H100/H200, SmolLM2: 88 capped
  EXPECT_EQ(attention_splits(132, 8), 33);   // Llama-3.2-1B
  EXPECT_EQ(attention_splits(132, 32), 9);
  EXPECT_EQ(attention_splits(16, 64), 1);
  EXPECT_EQ(attention_splits(0, 8), 1);
  EXPECT_EQ(attention_partial_floats(4, 9, 64, 1), 0u);
  EXPECT_EQ(attention_partial_floats(4, 9, 64, 8), std::size_t{4} * 9 * 8 * 66);
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
