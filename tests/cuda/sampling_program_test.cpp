// Sampling programs on the device (kernels/cuda/sampling_program.cu) against
// reference::run_sampling_program, on seeded random logits with a different program per row.
// CudaSamplingProgram runs sample_rows and skips where no GPU is usable; SamplingProgramOnHost
// runs the same algorithm on the host (sample_row_on_host), so it is checked everywhere.
//
// Tokens must be equal, except where launch.hpp's bound allows a difference: summing in a
// different order than the reference may flip a top-p or dist decision that the reference took
// within 2^-22 * threshold + n * 2^-51 of its threshold, or a min-p decision on a logit within
// 2 ulp of the threshold. A replay of the reference (run_reference) measures how close each of a
// row's decisions came; a differing row must be such a close call, and those must be rare: at
// most one per test.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/launch.hpp"
#include "gpu_test_support.hpp"
#include <lpx/cpp/sampling_ops.hpp>
#include "reference/sampling_program.hpp"

namespace lpx::kernels::cuda {
namespace {

using test::DeviceBuffer;
using test::finished;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// --- programs --------------------------------------------------------------------------------

lpx_sampling_op op(lpx_sampling_op_kind kind, std::uint32_t count, double value) {
  lpx_sampling_op o{};
  o.kind = kind;
  o.count = count;
  o.value = value;
  return o;
}
lpx_sampling_op temperature(double t) { return op(LPX_SAMPLING_TEMPERATURE, 0, t); }
lpx_sampling_op top_k(std::uint32_t k) { return op(LPX_SAMPLING_TOP_K, k, 0); }
lpx_sampling_op top_p(double p, std::uint32_t min_keep = 1) { return op(LPX_SAMPLING_TOP_P, min_keep, p); }
lpx_sampling_op min_p(double p, std::uint32_t min_keep = 1) { return op(LPX_SAMPLING_MIN_P, min_keep, p); }
lpx_sampling_op greedy() { return op(LPX_SAMPLING_GREEDY, 0, 0); }
lpx_sampling_op dist() { return op(LPX_SAMPLING_DIST, 0, 0); }

lpx_sampling_program program(std::initializer_list<lpx_sampling_op> ops, double uniform = 0.5) {
  lpx_sampling_program p{};
  for (const lpx_sampling_op& o : ops) p.ops[p.n_ops++] = o;
  p.uniform = uniform;
  return p;
}

std::string describe(const lpx_sampling_program& p) {
  static const char* const kNames[] = {"?", "temperature", "top-k", "top-p", "min-p", "greedy", "dist"};
  std::ostringstream text;
  text << "[";
  for (std::uint32_t i = 0; i < p.n_ops; ++i) {
    const lpx_sampling_op& o = p.ops[i];
    text << (i ? ", " : "") << kNames[o.kind <= 6 ? o.kind : 0] << " " << o.count << " " << o.value;
  }
  text << "] uniform " << p.uniform;
  return text.str();
}

// Each operation alone and in chains: the server's order, temperatures on both sides of the
// first sort, operations that keep everything, and top-k around the kernel's gathered-list
// capacity (1024).
std::vector<lpx_sampling_program> program_menu(int n) {
  const auto past_n = static_cast<std::uint32_t>(n) + 5;
  return {
      program({greedy()}),
      program({temperature(0.0), dist()}),
      program({temperature(0.7), dist()}),
      program({temperature(1.3), dist()}),
      program({top_k(1), dist()}),
      program({top_k(40), dist()}),
      program({top_k(past_n), dist()}),
      program({top_k(1024), dist()}),
      program({top_k(1025), temperature(0.9), dist()}),
      program({top_k(3000), top_p(0.99), dist()}),
      program({top_p(0.5), dist()}),
      program({top_p(0.9, 5), dist()}),
      program({top_p(0.999), dist()}),
      program({top_p(0.5, 5), dist()}),
      program({top_p(0.0), dist()}),
      program({min_p(0.05), dist()}),
      program({min_p(0.3, 4), dist()}),
      program({min_p(1.0), dist()}),  // the maximum and its ties only
      program({top_k(40), top_p(0.95), min_p(0.05), temperature(0.8), dist()}),
      program({top_p(0.9), temperature(0.7), dist()}),  // the server's order
      program({temperature(0.5), top_k(50), temperature(2.0), top_p(0.8, 2), dist()}),
      program({temperature(0.7), greedy()}),  // greedy without a sort
      program({temperature(1.5), greedy()}),
      program({temperature(1.5), top_k(2), dist()}),  // sorted after merging neighbours
      program({top_k(2), temperature(1.5), dist()}),  // sorted before
      program({top_k(0), top_p(1.0), min_p(0.0), dist()}),
      program({temperature(1e-50), dist()}),  // T rounds to float 0: temperature 0
  };
}

// --- logits ----------------------------------------------------------------------------------

// kAdjacent: a few neighbouring floats, which dividing by a temperature can merge into ties.
enum class Shape { kFlat, kPeaked, kTies, kMinusInf, kQuarterSteps, kAdjacent };
constexpr int kShapes = 6;

std::vector<float> make_logits(Shape shape, int n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> token(0, n - 1);
  std::vector<float> logits(static_cast<std::size_t>(n));
  for (float& l : logits) {
    switch (shape) {
      case Shape::kFlat: l = normal(rng); break;
      case Shape::kPeaked: l = 2.0f * normal(rng); break;
      case Shape::kTies: {  // small integers; zeros of both signs
        const int v = std::uniform_int_distribution<int>(-4, 4)(rng);
        l = v == 0 && rng() % 2 == 0 ? -0.0f : static_cast<float>(v);
        break;
      }
      case Shape::kMinusInf: l = rng() % 10 == 0 ? -kInf : 3.0f * normal(rng); break;
      case Shape::kQuarterSteps: l = std::round(8.0f * normal(rng)) / 4.0f; break;
      case Shape::kAdjacent: {  // 1.875 / 1.5 merges a third of the neighbours
        l = 1.875f;
        for (unsigned steps = rng() % 9; steps > 0; --steps) l = std::nextafter(l, 2.0f);
        break;
      }
    }
  }
  if (shape == Shape::kPeaked) {
    for (int i = 0; i < 5; ++i) logits[static_cast<std::size_t>(token(rng))] += 12.0f;
  }
  if (shape == Shape::kMinusInf) logits[static_cast<std::size_t>(token(rng))] = 1.0f;  // one finite
  return logits;
}

// rows rows of n logits, row r running menu[r % size] on shape (r / size + shift) % kShapes, with
// uniform 0, 0.999999 (the last candidate with any mass) or a random one, in turn per program.
struct Batch {
  int n = 0;
  int rows = 0;
  std::vector<float> logits;
  std::vector<lpx_sampling_program> programs;

  const float* row(int r) const { return logits.data() + static_cast<std::size_t>(r) * n; }
};

Batch make_batch(int n, int rows, unsigned seed, int shift) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const std::vector<lpx_sampling_program> menu = program_menu(n);
  const int size = static_cast<int>(menu.size());
  Batch b;
  b.n = n;
  b.rows = rows;
  for (int r = 0; r < rows; ++r) {
    const auto shape = static_cast<Shape>((r / size + shift) % kShapes);
    const std::vector<float> row = make_logits(shape, n, rng);
    b.logits.insert(b.logits.end(), row.begin(), row.end());
    lpx_sampling_program p = menu[static_cast<std::size_t>(r % size)];
    const int draw = (r + r / size) % 3;
    p.uniform = draw == 0 ? 0.0 : draw == 1 ? 0.999999 : uniform(rng);
    b.programs.push_back(p);
  }
  return b;
}

// --- the reference, replayed to see how close its decisions came ---------------------------

struct ReferenceRun {
  std::int32_t token = -1;
  bool close_call = false;  // a decision within launch.hpp's bound of flipping
};

// Whether the running sum of c's probabilities meets `threshold` (reaches it, or exceeds it when
// `strictly`) at a candidate where it, or the sum just before, lies within the bound.
bool running_sum_close(const lpx_candidates& c, double threshold, bool strictly) {
  const double bound = 0x1p-22 * std::fabs(threshold) + static_cast<double>(c.size) * 0x1p-51;
  double cumulative = 0;
  for (std::size_t i = 0; i < c.size; ++i) {
    const double before = cumulative;
    cumulative += static_cast<double>(c.data[i].p);
    if (strictly ? threshold < cumulative : cumulative >= threshold) {
      return std::fabs(cumulative - threshold) <= bound ||
             (i > 0 && std::fabs(before - threshold) <= bound);
    }
  }
  return std::fabs(cumulative - threshold) <= bound;
}

// Whether a candidate's logit lies within 2 ulp of min-p's threshold (exact when p = 1).
bool min_p_close(const lpx_candidates& c, double p) {
  if (p == 1.0) return false;
  const double threshold = static_cast<double>(c.data[0].logit) + std::log(p);
  const double bound = 0x1p-51 * (std::fabs(threshold) + std::fabs(std::log(p)));
  for (std::size_t i = 0; i < c.size; ++i) {
    if (std::fabs(static_cast<double>(c.data[i].logit) - threshold) <= bound) return true;
  }
  return false;
}

// reference::run_sampling_program step by step (the same lpx::samplers operations).
ReferenceRun run_reference(const lpx_sampling_program& program, const float* logits, int n) {
  std::vector<lpx_token_candidate> data(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) data[static_cast<std::size_t>(i)] = {i, logits[i], 0.0f};
  lpx_candidates c{data.data(), data.size(), -1, 0, 0, 0};
  ReferenceRun run;
  for (std::uint32_t i = 0; i < program.n_ops; ++i) {
    const lpx_sampling_op& o = program.ops[i];
    c.selected = -1;
    switch (o.kind) {
      case LPX_SAMPLING_TEMPERATURE: samplers::apply_temperature(c, static_cast<float>(o.value)); break;
      case LPX_SAMPLING_TOP_K: samplers::apply_top_k(c, o.count); break;
      case LPX_SAMPLING_TOP_P:
        if (o.value < 1.0) {
          samplers::softmax(c);
          run.close_call = run.close_call || running_sum_close(c, o.value, false);
        }
        samplers::apply_top_p(c, o.value, o.count);
        break;
      case LPX_SAMPLING_MIN_P:
        if (o.value > 0.0) {
          samplers::sort_descending(c);
          run.close_call = run.close_call || min_p_close(c, o.value);
        }
        samplers::apply_min_p(c, o.value, o.count);
        break;
      case LPX_SAMPLING_GREEDY: samplers::select_greedy(c); break;
      case LPX_SAMPLING_DIST: {
        samplers::softmax(c);
        double sum = 0;
        for (std::size_t j = 0; j < c.size; ++j) sum += static_cast<double>(c.data[j].p);
        run.close_call = run.close_call || running_sum_close(c, program.uniform * sum, true);
        samplers::select_by_probability(c, program.uniform);
        break;
      }
      default: break;
    }
  }
  run.token = c.selected >= 0 ? c.data[c.selected].id : -1;
  return run;
}

// Checks every row's token against the reference; returns how many rows differ (each must be a
// close call).
int differences_from_reference(const Batch& b, const std::vector<std::int32_t>& tokens,
                               const std::string& what) {
  int differing = 0;
  std::vector<lpx_token_candidate> scratch(static_cast<std::size_t>(b.n));
  for (int r = 0; r < b.rows; ++r) {
    const lpx_sampling_program& p = b.programs[static_cast<std::size_t>(r)];
    EXPECT_EQ(reference::check_sampling_program(p), "") << describe(p);
    const ReferenceRun ref = run_reference(p, b.row(r), b.n);
    EXPECT_EQ(ref.token, reference::run_sampling_program(p, b.row(r), static_cast<std::size_t>(b.n),
                                                         scratch.data()))
        << "the replay strays from the reference: " << describe(p);
    const std::int32_t token = tokens[static_cast<std::size_t>(r)];
    EXPECT_TRUE(token >= 0 && token < b.n) << what << " n " << b.n << " row " << r << ": " << token;
    if (token == ref.token) continue;
    ++differing;
    EXPECT_TRUE(ref.close_call) << what << " n " << b.n << " row " << r << ": token " << token
                                << ", reference " << ref.token << ", " << describe(p);
  }
  return differing;
}

std::vector<std::int32_t> run_on_host(const Batch& b) {
  std::vector<std::int32_t> tokens;
  for (int r = 0; r < b.rows; ++r) {
    tokens.push_back(sample_row_on_host(b.row(r), b.n, b.programs[static_cast<std::size_t>(r)]));
  }
  return tokens;
}

// One launch over rows [first, first + rows) of the batch.
std::vector<std::int32_t> run_on_device(const Batch& b, int first, int rows) {
  const std::size_t begin = static_cast<std::size_t>(first) * static_cast<std::size_t>(b.n);
  const std::vector<float> logits(b.logits.begin() + static_cast<std::ptrdiff_t>(begin),
                                  b.logits.begin() + static_cast<std::ptrdiff_t>(begin) +
                                      static_cast<std::ptrdiff_t>(rows) * b.n);
  const std::vector<lpx_sampling_program> programs(b.programs.begin() + first,
                                                   b.programs.begin() + first + rows);
  DeviceBuffer<float> d_logits(logits);
  DeviceBuffer<lpx_sampling_program> d_programs(programs);
  DeviceBuffer<std::int32_t> d_out(std::vector<std::int32_t>(static_cast<std::size_t>(rows), -7));
  sample_rows(d_logits.get(), rows, b.n, d_programs.get(), d_out.get(), nullptr);
  EXPECT_TRUE(finished());
  return d_out.download();
}

std::vector<std::int32_t> run_on_device(const Batch& b) { return run_on_device(b, 0, b.rows); }

// Vocabulary sizes and rows: every program on every shape for the small ones, every program with
// each kind of uniform for the large ones (the reference sorts the whole vocabulary per row).
struct Size {
  int n;
  int rows;
};
std::vector<Size> sizes(int menu) {
  return {{1, menu}, {7, menu * kShapes}, {1025, menu * kShapes}, {32000, menu * 3},
          {49152, menu * 3}, {151936, menu * 3}};
}

// Rows whose logits are not all finite. The reference is defined with infinities: -inf has
// probability 0; a +inf maximum or an all -inf row makes its probabilities NaN (top-p keeps
// every candidate, dist takes the last).
Batch infinite_rows() {
  Batch b;
  b.n = 6;
  const std::vector<std::vector<float>> rows = {
      {-kInf, -kInf, -kInf, -kInf, -kInf, -kInf},
      {1.0f, kInf, -2.0f, kInf, -kInf, 0.5f},
      {-kInf, 3.0f, -kInf, 3.0f, -kInf, -1.0f},
      {3e38f, 2e38f, -3e38f, 1.0f, 3e38f, 0.0f},  // overflow to +-inf at temperature 0.5
      {-0.0f, 0.0f, -0.0f, 0.0f, -kInf, -0.0f},
  };
  const std::vector<lpx_sampling_program> programs = {
      program({greedy()}),
      program({dist()}, 0.5),
      program({top_p(0.9), dist()}, 0.3),
      program({min_p(0.1, 2), dist()}, 0.6),
      program({temperature(0.5), top_k(3), dist()}, 0.2),
      program({top_k(2), temperature(0.5), dist()}, 0.999999),
      program({temperature(0.0), dist()}),
  };
  for (const std::vector<float>& row : rows) {
    for (const lpx_sampling_program& p : programs) {
      b.logits.insert(b.logits.end(), row.begin(), row.end());
      b.programs.push_back(p);
      ++b.rows;
    }
  }
  return b;
}

// Rows with NaNs, where the reference is undefined, and what the kernel promises instead: a NaN
// ranks after every number, has probability 0 and fails min-p.
struct NaNCase {
  std::vector<float> logits;
  lpx_sampling_program program;
  std::int32_t token;
};
std::vector<NaNCase> nan_cases() {
  const std::vector<float> some = {kNaN, 1.0f, 2.0f, kNaN, 2.0f};
  const std::vector<float> all(5, kNaN);
  return {
      {some, program({greedy()}), 2},
      {some, program({top_k(2), dist()}, 0.999999), 4},
      {some, program({dist()}, 0.999999), 1},  // NaNs have no mass: the last real one
      {some, program({top_p(0.9), dist()}, 0.999999), 1},
      {some, program({min_p(0.5), dist()}, 0.999999), 4},
      {all, program({greedy()}), 0},
      {all, program({dist()}, 0.5), 4},  // no probabilities: the last
      {all, program({top_p(0.5), dist()}, 0.5), 4},
      {all, program({min_p(0.5), dist()}, 0.5), 0},  // at least one candidate stays
  };
}

// --- on the host: the algorithm, everywhere ---------------------------------------------------

TEST(SamplingProgramOnHost, MatchesTheReferenceOnRandomProgramsAndLogits) {
  const int menu = static_cast<int>(program_menu(1).size());
  int differing = 0;
  unsigned seed = 100;
  int shift = 0;
  for (const Size& size : sizes(menu)) {
    const Batch b = make_batch(size.n, size.rows, seed++, shift++);
    differing += differences_from_reference(b, run_on_host(b), "host");
  }
  EXPECT_LE(differing, 1) << "close calls should be rare";
}

TEST(SamplingProgramOnHost, MatchesTheReferenceWithInfiniteLogits) {
  const Batch b = infinite_rows();
  EXPECT_EQ(differences_from_reference(b, run_on_host(b), "host"), 0);
}

TEST(SamplingProgramOnHost, RanksNaNLastWithoutMass) {
  for (const NaNCase& c : nan_cases()) {
    EXPECT_EQ(sample_row_on_host(c.logits.data(), static_cast<int>(c.logits.size()), c.program),
              c.token)
        << describe(c.program);
  }
}

TEST(SamplingProgramOnHost, AProgramThatDoesNotSelectGivesMinusOne) {
  const std::vector<float> logits = {1.0f, 2.0f};
  EXPECT_EQ(sample_row_on_host(logits.data(), 2, program({greedy(), top_k(1)})), -1);
  EXPECT_EQ(sample_row_on_host(logits.data(), 2, program({top_k(1)})), -1);
}

// --- on the device ------------------------------------------------------------------------------

TEST(CudaSamplingProgram, MatchesTheReferenceOnRandomProgramsAndLogits) {
  LPX_REQUIRE_GPU();
  const int menu = static_cast<int>(program_menu(1).size());
  int differing = 0;
  unsigned seed = 200;
  int shift = 2;
  for (const Size& size : sizes(menu)) {
    const Batch b = make_batch(size.n, size.rows, seed++, shift++);
    differing += differences_from_reference(b, run_on_device(b), "device");
  }
  EXPECT_LE(differing, 1) << "close calls should be rare";
}

TEST(CudaSamplingProgram, MatchesTheReferenceWithInfiniteLogits) {
  LPX_REQUIRE_GPU();
  const Batch b = infinite_rows();
  EXPECT_EQ(differences_from_reference(b, run_on_device(b), "device"), 0);
}

TEST(CudaSamplingProgram, RanksNaNLastWithoutMass) {
  LPX_REQUIRE_GPU();
  for (const NaNCase& c : nan_cases()) {
    Batch b;
    b.n = static_cast<int>(c.logits.size());
    b.rows = 1;
    b.logits = c.logits;
    b.programs = {c.program};
    EXPECT_EQ(run_on_device(b), std::vector<std::int32_t>{c.token}) << describe(c.program);
  }
}

// A row's token depends on its logits and program only: alone, in another batch, or run again.
TEST(CudaSamplingProgram, ARowDoesNotDependOnTheOtherRows) {
  LPX_REQUIRE_GPU();
  const int menu = static_cast<int>(program_menu(1).size());
  const Batch b = make_batch(32000, menu * 2, 300, 1);
  const std::vector<std::int32_t> together = run_on_device(b);
  EXPECT_EQ(run_on_device(b), together) << "a second launch differs";
  for (int r = 0; r < b.rows; ++r) {
    EXPECT_EQ(run_on_device(b, r, 1)[0], together[static_cast<std::size_t>(r)]) << "row " << r;
  }
  const int half = b.rows / 2;
  std::vector<std::int32_t> halves = run_on_device(b, half, b.rows - half);
  const std::vector<std::int32_t> first = run_on_device(b, 0, half);
  halves.insert(halves.begin(), first.begin(), first.end());
  EXPECT_EQ(halves, together);
}

TEST(CudaSamplingProgram, NoRowsOrNoLogitsLaunchNothing) {
  LPX_REQUIRE_GPU();
  DeviceBuffer<std::int32_t> d_out(std::vector<std::int32_t>{-7});
  sample_rows(nullptr, 0, 10, nullptr, d_out.get(), nullptr);
  sample_rows(nullptr, 1, 0, nullptr, d_out.get(), nullptr);
  ASSERT_TRUE(finished());
  EXPECT_EQ(d_out.download(), std::vector<std::int32_t>{-7});
}

}  // namespace
}  // namespace lpx::kernels::cuda
