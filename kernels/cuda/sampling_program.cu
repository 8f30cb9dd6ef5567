// On-GPU sampling programs (lpx/kinds/sampling_program.h): sample_rows runs one program per row
// of logits, one thread block per row, so that only the chosen token id leaves the device.
// kernels/reference/sampling_program.cpp is the ground truth.
//
// No sort. Every operation asks a rank or prefix question about the candidates in the
// reference's order (descending logit, equal logits by ascending id), and every filter keeps a
// prefix of that order. So each token gets a key that ascends in that order,
//     key = descending_bits(logit) << id_bits | id        (32 + ceil(log2 n) bits, unique)
// and the candidates are always "every key <= bound", `size` of them. The questions:
//   - the first candidate (greedy, temperature 0, the softmax maximum): the least key, one pass,
//     once per row (filters never remove it);
//   - the key of rank r (top-k, min_keep, the last candidate): a radix descent, kDigitBits of the
//     key per level: a block-wide histogram of the candidates under the prefix found so far, by
//     their next digit, then the bucket where the running count reaches r + 1. Levels:
//     ceil((32 + id_bits) / 11): 5 for vocabularies of 4097 .. 2^23 tokens, 4 below;
//   - where the running softmax mass crosses a threshold (top-p, dist): one pass for the softmax
//     sum, then the same descent with every candidate weighed by its probability;
//   - min-p: one pass counting the candidates at or above the threshold (a prefix: dividing by
//     a temperature may merge two logits but never swaps them).
// Once the candidates, or the bucket a descent narrowed to, number at most kListCapacity, one pass
// gathers their ids into shared memory and later passes read that list instead of the row. A
// descent over a whole vocabulary typically reads the row at its first one or two levels (the
// first digit is the logit's sign, exponent and two mantissa bits), then gathers, so an operation
// costs three or four passes over the row while many candidates remain, and almost nothing once
// few do.
//
// The reference sorts once, at its first ordering operation (temperature 0, top-k k > 0, top-p
// p < 1, min-p p > 0, dist; greedy reads the order without sorting), by the logits scaled by the
// temperatures before it; later temperatures rescale the logits without re-sorting. So a key uses
// the logit divided by those first temperatures (the "order value"), and the softmax and min-p use
// it divided by every temperature so far (the "current value"), each division in float, in
// program order, as the reference.
//
// Sums are integers, so nothing depends on summation order, thread timing or the other rows: the
// softmax sum of exp(l - max) is accumulated in 128-bit fixed point (2^-96 units, then rounded to
// double), each probability is float(exp(l - max) / sum) as in the reference, and running masses
// are sums of those floats in 2^-62 units (64 bits). launch.hpp gives the resulting bound against
// the reference, which adds in double in candidate order.
//
// Every thread of a block runs the same Runner on block-wide results, so every thread reaches
// every barrier. Runner is shared with sample_row_on_host (HostBlock: the same questions answered
// by plain loops), which lets the tests check the algorithm where no GPU is usable.
#include <lpx/kinds/sampling_program.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cuda/device_math.cuh"
#include "cuda/launch.hpp"

namespace lpx::kernels::cuda {
namespace {

// Runner below is compiled for both sides; nvcc must not complain that its host instance calls
// DeviceBlock, or its device instance HostBlock: neither instance is ever called there.
#define LPX_EITHER_SIDE _Pragma("nv_exec_check_disable") __host__ __device__

using u64 = unsigned long long;  // the type of CUDA's 64-bit atomics and shuffles
static_assert(sizeof(u64) == 8);

constexpr int kThreads = 1024;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullWarp = 0xFFFFFFFFu;
constexpr int kValueBits = 32;                      // the logit part of a key
constexpr int kDigitBits = 11;                      // key bits one descent level decides
constexpr int kBuckets = 1 << kDigitBits;
constexpr int kBucketsPerThread = kBuckets / kThreads;
constexpr int kListCapacity = kThreads;             // candidates gathered into shared memory
constexpr int kLoadsInFlight = 4;                   // per thread, in a pass over the row
constexpr double kMassUnitsPerOne = 0x1p62;         // probabilities in 2^-62 units
constexpr int kSumFractionBits = 96;                // the softmax sum in 2^-96 units
constexpr u64 kAllKeys = ~u64{0};
constexpr std::uint32_t kNaNBits = 0xFFFFFFFFu;     // after -inf, whose bits are 0xFF800000
static_assert(kBuckets % kThreads == 0);

// --- pure helpers, the same on both sides ---------------------------------------------------

__host__ __device__ inline std::uint32_t float_bits(float v) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(v);
#else
  std::uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
#endif
}

__host__ __device__ inline u64 double_bits(double v) {
#ifdef __CUDA_ARCH__
  return static_cast<u64>(__double_as_longlong(v));
#else
  u64 bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
#endif
}

// a + b rounded once (no contraction with a neighbouring multiply).
__host__ __device__ inline double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

__host__ __device__ inline double exp_of(double x) {
#ifdef __CUDA_ARCH__
  return ::exp(x);
#else
  return std::exp(x);
#endif
}

__host__ __device__ inline double log_of(double x) {
#ifdef __CUDA_ARCH__
  return ::log(x);
#else
  return std::log(x);
#endif
}

__host__ __device__ inline bool is_finite(float v) { return v >= -FLT_MAX && v <= FLT_MAX; }

// v divided by t[0], t[1], ... t[count - 1] in turn.
__host__ __device__ inline float divided(float v, const float* t, int count) {
  // Rounded as the reference's `logit /= temperature`.
  for (int i = 0; i < count; ++i) v = detail::div_rn(v, t[i]);
  return v;
}

// Bits that ascend as v descends: larger logits first, -inf last of the numbers, every NaN after
// it; +0 and -0 are the same logit.
__host__ __device__ inline std::uint32_t descending_bits(float v) {
  if (v != v) return kNaNBits;
  if (v == 0.0f) v = 0.0f;
  const std::uint32_t bits = float_bits(v);
  const std::uint32_t ascending = (bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u;
  return ~ascending;
}

// The bits an id takes: ceil(log2 n), 0 for n = 1.
__host__ __device__ inline int id_bits_for(int n) {
  int bits = 0;
  while (bits < 31 && (1 << bits) < n) ++bits;
  return bits;
}

__host__ __device__ inline u64 candidate_key(float order_value, std::int32_t id, int id_bits) {
  return u64{descending_bits(order_value)} << id_bits | static_cast<std::uint32_t>(id);
}

__host__ __device__ inline std::int32_t id_of(u64 key, int id_bits) {
  return static_cast<std::int32_t>(key & ((u64{1} << id_bits) - 1));
}

// A non-negative number in 2^-kSumFractionBits units, as a 128-bit integer.
struct Fixed128 {
  u64 hi = 0;
  u64 lo = 0;
};

__host__ __device__ inline Fixed128 plus(Fixed128 a, Fixed128 b) {
  Fixed128 sum;
  sum.lo = a.lo + b.lo;
  sum.hi = a.hi + b.hi + (sum.lo < a.lo ? 1 : 0);
  return sum;
}

// x in [0, 2^31) (anything else, NaN included, counts as 0), bits below 2^-96 dropped.
__host__ __device__ inline Fixed128 to_fixed(double x) {
  Fixed128 f;
  if (!(x > 0) || !(x < 0x1p31)) return f;
  const u64 bits = double_bits(x);
  const int exponent = static_cast<int>(bits >> 52 & 0x7FF);
  if (exponent == 0) return f;  // subnormal: far below 2^-96
  const u64 mantissa = (bits & ((u64{1} << 52) - 1)) | u64{1} << 52;
  // x = mantissa * 2^(exponent - 1075), so x in units is mantissa * 2^shift.
  const int shift = exponent - 1075 + kSumFractionBits;
  if (shift <= -53) return f;
  if (shift < 0) {
    f.lo = mantissa >> -shift;
  } else if (shift == 0) {
    f.lo = mantissa;
  } else if (shift < 64) {
    f.lo = mantissa << shift;
    f.hi = mantissa >> (64 - shift);
  } else {
    f.hi = mantissa << (shift - 64);
  }
  return f;
}

// Within an ulp or two of the exact value.
__host__ __device__ inline double to_double(Fixed128 f) {
  return static_cast<double>(f.hi) * 0x1p-32 + static_cast<double>(f.lo) * 0x1p-96;
}

// exp(value - first) in double, as the reference's softmax computes it.
__host__ __device__ inline double softmax_term(float value, float first) {
  return exp_of(static_cast<double>(value) - static_cast<double>(first));
}

// A probability (a float in [0, 1]) in 2^-62 units, rounded to nearest; NaN counts as 0.
__host__ __device__ inline u64 mass_units(float p) {
  if (!(p > 0.0f)) return 0;
  return static_cast<u64>(static_cast<double>(p) * kMassUnitsPerOne + 0.5);
}

// The candidates as the operations so far left them.
struct View {
  const float* row = nullptr;  // the n logits of the row
  int n = 0;
  int id_bits = 0;
  const std::int32_t* list = nullptr;  // when set: the candidates are among these ids
  int list_size = 0;
  u64 bound = kAllKeys;                 // the candidates: every key <= bound
  const float* temperatures = nullptr;  // the program's T > 0, in order
  int n_order = 0;                      // of them, those applied before the order was fixed
  int n_current = 0;                    // of them, those applied so far
};

struct Candidate {
  u64 key = 0;
  float order_value = 0;
};

// Token `id` (logit `raw`) as a candidate; false when it no longer is one.
__host__ __device__ inline bool make_candidate(const View& v, std::int32_t id, float raw,
                                               Candidate* c) {
  c->order_value = divided(raw, v.temperatures, v.n_order);
  c->key = candidate_key(c->order_value, id, v.id_bits);
  return c->key <= v.bound;
}

__host__ __device__ inline float current_value(const View& v, float order_value) {
  return divided(order_value, v.temperatures + v.n_order, v.n_current - v.n_order);
}

// How a descent weighs a candidate: 1 each (ranks), or its softmax probability in 2^-62 units.
struct Weighting {
  bool by_mass = false;
  float first_value = 0;  // the softmax maximum
  double sum = 1;         // the softmax sum
};

__host__ __device__ inline u64 weight_of(const View& v, const Weighting& w, float order_value) {
  if (!w.by_mass) return 1;
  const double term = softmax_term(current_value(v, order_value), w.first_value);
  return mass_units(static_cast<float>(term / w.sum));
}

// The running weight a descent looks for: the first candidate where it reaches `units`, or
// where it reaches p (top-p), or where it exceeds uniform * total (dist).
struct Target {
  enum Kind { kUnits, kAtLeastFraction, kAboveFractionOfTotal };
  Kind kind = kUnits;
  u64 units = 0;
  double fraction = 0;

  // In units, given the total weight of the candidates (>= 1). A target no total can reach
  // (only from out-of-range fractions) comes out as kUnreachable.
  __host__ __device__ u64 resolve(u64 total) const {
    switch (kind) {
      case kAtLeastFraction: {  // the least whole number of units >= p
        const double x = fraction * kMassUnitsPerOne;  // exact: a power-of-two scale
        if (!(x > 0)) return 1;
        if (!(x < kUnitsLimit)) return kUnreachable;
        const u64 whole = static_cast<u64>(x);
        return static_cast<double>(whole) < x ? whole + 1 : whole;
      }
      case kAboveFractionOfTotal: {  // the least whole number of units > uniform * total
        const double x = fraction * static_cast<double>(total);
        if (!(x > 0)) return 1;
        if (!(x < kUnitsLimit)) return kUnreachable;
        return static_cast<u64>(x) + 1;
      }
      default: return units;
    }
  }

  static constexpr double kUnitsLimit = 0x1p63;
  static constexpr u64 kUnreachable = ~u64{0};
};

// The level of a descent deciding key bits [low, high); bits [high, key_bits) are the prefix.
struct Digits {
  int high = 0;
  int low = 0;
};

__host__ __device__ inline bool under_prefix(u64 key, u64 prefix, int high) {
  return key >> high == prefix;
}

__host__ __device__ inline std::uint32_t digit_of(u64 key, Digits d) {
  return static_cast<std::uint32_t>(key >> d.low) & ((1u << (d.high - d.low)) - 1);
}

// The bucket of one descent level where the running weight reaches the target. Trivial (no
// member initializers: it lives in shared memory); value-initialize it.
struct Crossing {
  bool found;                  // false: the candidates' total weight falls short
  std::uint32_t digit;
  std::uint32_t count_before;  // candidates in the lower buckets of this level
  u64 weight_before;           // and their weight
  std::uint32_t bucket_count;  // candidates in the chosen bucket
  u64 units;                   // the target resolved, in units
};

struct AtLeast {
  std::uint32_t count = 0;  // candidates whose current value is >= the threshold
  u64 last_key = 0;         // the greatest key among them
};

// The Ts of the program's temperature operations that divide (T > 0 in float), in order.
__host__ __device__ inline void collect_temperatures(const lpx_sampling_program& program,
                                                     float* out) {
  int count = 0;
  for (std::uint32_t i = 0; i < program.n_ops && i < LPX_SAMPLING_MAX_OPS; ++i) {
    const float t = static_cast<float>(program.ops[i].value);
    if (program.ops[i].kind == LPX_SAMPLING_TEMPERATURE && t > 0) out[count++] = t;
  }
}

// --- the program, over a Block that answers block-wide questions ----------------------------
//
// Block provides, each returning the same value to every thread:
//   u64 min_key(view)                         the least candidate key
//   double sum_exp(view, first_value)         the softmax sum
//   AtLeast count_at_least(view, threshold)   min-p's count
//   void histogram(view, prefix, digits, w)   one descent level's buckets...
//   Crossing choose_bucket(w, target, before) ...and where the running weight crosses
//   View gather(view, prefix, high)           the candidates under a prefix, as a list
template <class Block>
class Runner {
 public:
  LPX_EITHER_SIDE Runner(Block& block, const float* row, int n, const float* temperatures)
      : block_(block), size_(static_cast<std::uint32_t>(n)) {
    view_.row = row;
    view_.n = n;
    view_.id_bits = id_bits_for(n);
    view_.temperatures = temperatures;
  }

  // The token the program picks; -1 when its last operation does not select (as the reference).
  LPX_EITHER_SIDE std::int32_t run(const lpx_sampling_program& program) {
    bool selected = false;
    u64 choice = 0;
    for (std::uint32_t i = 0; i < program.n_ops && i < LPX_SAMPLING_MAX_OPS; ++i) {
      const lpx_sampling_op& op = program.ops[i];
      selected = false;
      switch (op.kind) {
        case LPX_SAMPLING_TEMPERATURE: temperature(static_cast<float>(op.value)); break;
        case LPX_SAMPLING_TOP_K: top_k(op.count); break;
        case LPX_SAMPLING_TOP_P: top_p(op.value, op.count); break;
        case LPX_SAMPLING_MIN_P: min_p(op.value, op.count); break;
        case LPX_SAMPLING_GREEDY:
          choice = greedy();
          selected = true;
          break;
        case LPX_SAMPLING_DIST:
          choice = dist(program.uniform);
          selected = true;
          break;
        default: break;
      }
    }
    return selected ? id_of(choice, view_.id_bits) : -1;
  }

 private:
  LPX_EITHER_SIDE void temperature(float t) {
    if (t > 0) {
      ++view_.n_current;  // applied on the fly to every value read from now on
      return;
    }
    fix_order();
    keep_first(1);
  }

  LPX_EITHER_SIDE void top_k(std::uint32_t k) {
    if (k == 0) return;
    fix_order();
    keep_first(k);
  }

  LPX_EITHER_SIDE void top_p(double p, std::uint32_t min_keep) {
    if (p >= 1.0) return;
    fix_order();
    const float first = first_value();
    if (!is_finite(first)) return;  // the reference's probabilities are NaN: it keeps all
    Target target;
    target.kind = Target::kAtLeastFraction;
    target.fraction = p;
    const Found found = descend(softmax_weighting(first), target);
    if (!found.found) return;  // the running mass never reaches p: all stay
    const std::uint32_t crossing = found.rank + 1;
    if (min_keep > crossing) {
      keep_first(min_keep);
    } else {
      keep_through(found.key, crossing);
    }
  }

  LPX_EITHER_SIDE void min_p(double p, std::uint32_t min_keep) {
    if (p <= 0.0) return;
    fix_order();
    const double threshold = add(static_cast<double>(first_value()), log_of(p));
    const AtLeast at_least = block_.count_at_least(candidates(), threshold);
    std::uint32_t keep = min_keep < size_ ? min_keep : size_;
    if (at_least.count > keep) keep = at_least.count;
    if (keep == 0) keep = 1;  // only a NaN maximum leaves no candidate at the threshold
    if (keep == at_least.count) {
      keep_through(at_least.last_key, keep);
    } else {
      keep_first(keep);
    }
  }

  LPX_EITHER_SIDE u64 greedy() {
    if (ordered_) return first_key();
    View now = view_;  // the reference scans the current logits without sorting
    now.n_order = now.n_current;
    return block_.min_key(now);
  }

  LPX_EITHER_SIDE u64 dist(double uniform) {
    fix_order();
    const float first = first_value();
    if (!is_finite(first)) return key_at_rank(size_ - 1);  // NaN probabilities: the last
    Target target;
    target.kind = Target::kAboveFractionOfTotal;
    target.fraction = uniform;
    const Found found = descend(softmax_weighting(first), target);
    return found.found ? found.key : key_at_rank(size_ - 1);
  }

  // The reference sorts here, by the logits as they are now, unless it already has.
  LPX_EITHER_SIDE void fix_order() {
    if (ordered_) return;
    ordered_ = true;
    view_.n_order = view_.n_current;
  }

  LPX_EITHER_SIDE u64 first_key() {
    if (!have_first_) {
      first_ = block_.min_key(view_);
      have_first_ = true;
    }
    return first_;
  }

  // The first candidate's current value: the softmax maximum.
  LPX_EITHER_SIDE float first_value() {
    const float raw = view_.row[id_of(first_key(), view_.id_bits)];
    return current_value(view_, divided(raw, view_.temperatures, view_.n_order));
  }

  LPX_EITHER_SIDE void keep_first(std::uint32_t count) {
    if (count >= size_) return;
    keep_through(key_at_rank(count - 1), count);
  }

  LPX_EITHER_SIDE void keep_through(u64 last_key, std::uint32_t count) {
    view_.bound = last_key;
    size_ = count;
  }

  // The candidates, gathered into a list first when they have become few.
  LPX_EITHER_SIDE const View& candidates() {
    if (view_.list == nullptr && size_ <= kListCapacity) {
      view_ = block_.gather(view_, 0, kValueBits + view_.id_bits);
    }
    return view_;
  }

  LPX_EITHER_SIDE Weighting softmax_weighting(float first) {
    Weighting w;
    w.by_mass = true;
    w.first_value = first;
    w.sum = block_.sum_exp(candidates(), first);
    return w;
  }

  LPX_EITHER_SIDE u64 key_at_rank(std::uint32_t rank) {
    if (rank == 0) return first_key();
    Target target;
    target.units = u64{rank} + 1;
    return descend(Weighting{}, target).key;  // rank < size_: always found
  }

  struct Found {
    bool found = false;
    u64 key = 0;
    std::uint32_t rank = 0;  // candidates before the key
  };

  // The first candidate (least key) whose running weight reaches the target: a radix descent
  // over the key, kDigitBits per level, most significant first.
  LPX_EITHER_SIDE Found descend(const Weighting& w, Target target) {
    View view = candidates();
    u64 prefix = 0;
    u64 weight_before = 0;
    Found found;
    for (int high = kValueBits + view.id_bits; high > 0;) {
      Digits digits;
      digits.high = high;
      digits.low = high > kDigitBits ? high - kDigitBits : 0;
      block_.histogram(view, prefix, digits, w);
      const Crossing crossing = block_.choose_bucket(w, target, weight_before);
      if (!crossing.found) return Found{};
      target.kind = Target::kUnits;
      target.units = crossing.units;
      prefix = prefix << (digits.high - digits.low) | crossing.digit;
      found.rank += crossing.count_before;
      weight_before += crossing.weight_before;
      high = digits.low;
      // Gathering costs a pass over the row: worth it when two levels or more remain.
      if (high > kDigitBits && view.list == nullptr && crossing.bucket_count <= kListCapacity) {
        view = block_.gather(view, prefix, high);
      }
    }
    found.found = true;
    found.key = prefix;
    return found;
  }

  Block& block_;
  View view_;
  std::uint32_t size_;  // the candidates: every key <= view_.bound
  bool ordered_ = false;
  bool have_first_ = false;
  u64 first_ = 0;
};

#undef LPX_EITHER_SIDE

// --- the device: one thread block per row --------------------------------------------------

struct SharedScratch {
  u64 weights[kBuckets];
  std::uint32_t counts[kBuckets];
  std::int32_t list[kListCapacity];
  u64 warp_totals[2][kWarps];
  Crossing crossing;
  int list_size;
};

class DeviceBlock {
 public:
  __device__ explicit DeviceBlock(SharedScratch& s) : s_(s) {}

  __device__ u64 min_key(const View& view) {
    u64 least = kAllKeys;
    for_each_candidate(view, [&](const Candidate& c) {
      if (c.key < least) least = c.key;
    });
    return block_reduce(least, [](u64 a, u64 b) { return a < b ? a : b; });
  }

  __device__ double sum_exp(const View& view, float first_value) {
    Fixed128 sum;
    for_each_candidate(view, [&](const Candidate& c) {
      sum = plus(sum, to_fixed(softmax_term(current_value(view, c.order_value), first_value)));
    });
    for (int offset = 16; offset > 0; offset /= 2) {
      Fixed128 other;
      other.hi = __shfl_xor_sync(kFullWarp, sum.hi, offset);
      other.lo = __shfl_xor_sync(kFullWarp, sum.lo, offset);
      sum = plus(sum, other);
    }
    if (lane() == 0) {
      s_.warp_totals[0][warp()] = sum.hi;
      s_.warp_totals[1][warp()] = sum.lo;
    }
    __syncthreads();
    Fixed128 total;
    for (int w = 0; w < kWarps; ++w) {
      Fixed128 part;
      part.hi = s_.warp_totals[0][w];
      part.lo = s_.warp_totals[1][w];
      total = plus(total, part);
    }
    __syncthreads();
    return to_double(total);
  }

  __device__ AtLeast count_at_least(const View& view, double threshold) {
    u64 count = 0;
    u64 last = 0;
    for_each_candidate(view, [&](const Candidate& c) {
      if (static_cast<double>(current_value(view, c.order_value)) >= threshold) {
        ++count;
        if (c.key > last) last = c.key;
      }
    });
    AtLeast result;
    result.count = static_cast<std::uint32_t>(block_reduce(count, [](u64 a, u64 b) { return a + b; }));
    result.last_key = block_reduce(last, [](u64 a, u64 b) { return a > b ? a : b; });
    return result;
  }

  __device__ void histogram(const View& view, u64 prefix, Digits digits, const Weighting& w) {
    for (int b = threadIdx.x; b < kBuckets; b += kThreads) {
      s_.counts[b] = 0;
      s_.weights[b] = 0;
    }
    __syncthreads();
    for_each_candidate(view, [&](const Candidate& c) {
      if (!under_prefix(c.key, prefix, digits.high)) return;
      const std::uint32_t digit = digit_of(c.key, digits);
      atomicAdd(&s_.counts[digit], 1u);
      if (w.by_mass) atomicAdd(&s_.weights[digit], weight_of(view, w, c.order_value));
    });
    __syncthreads();
  }

  // A block-wide scan of the buckets; each thread owns kBucketsPerThread consecutive ones.
  __device__ Crossing choose_bucket(const Weighting& w, const Target& target, u64 weight_before) {
    const int first_bucket = threadIdx.x * kBucketsPerThread;
    u64 count = 0;
    u64 weight = 0;
    for (int b = first_bucket; b < first_bucket + kBucketsPerThread; ++b) {
      count += s_.counts[b];
      weight += bucket_weight(w, b);
    }
    u64 count_through = count;  // inclusive scan within the warp
    u64 weight_through = weight;
    for (int offset = 1; offset < 32; offset *= 2) {
      const u64 lower_count = __shfl_up_sync(kFullWarp, count_through, offset);
      const u64 lower_weight = __shfl_up_sync(kFullWarp, weight_through, offset);
      if (lane() >= offset) {
        count_through += lower_count;
        weight_through += lower_weight;
      }
    }
    if (lane() == 31) {
      s_.warp_totals[0][warp()] = count_through;
      s_.warp_totals[1][warp()] = weight_through;
    }
    if (threadIdx.x == 0) s_.crossing.found = false;
    __syncthreads();
    u64 count_below = count_through - count;  // this thread's buckets: what lies below them
    u64 weight_below = weight_through - weight;
    u64 total = 0;
    for (int i = 0; i < kWarps; ++i) {
      if (i < warp()) {
        count_below += s_.warp_totals[0][i];
        weight_below += s_.warp_totals[1][i];
      }
      total += s_.warp_totals[1][i];
    }
    const u64 units = target.resolve(total);
    // Deeper levels: the chosen bucket held more than weight_before, so need >= 1.
    const u64 need = units > weight_before ? units - weight_before : 1;
    if (need <= total) {
      for (int b = first_bucket; b < first_bucket + kBucketsPerThread; ++b) {
        const u64 bucket = bucket_weight(w, b);
        if (weight_below < need && need <= weight_below + bucket) {  // true for one bucket
          Crossing& c = s_.crossing;
          c.found = true;
          c.digit = static_cast<std::uint32_t>(b);
          c.count_before = static_cast<std::uint32_t>(count_below);
          c.weight_before = weight_below;
          c.bucket_count = s_.counts[b];
          c.units = units;
        }
        count_below += s_.counts[b];
        weight_below += bucket;
      }
    }
    __syncthreads();
    const Crossing crossing = s_.crossing;
    __syncthreads();
    return crossing;
  }

  // Only from the row (the list is where the result goes).
  __device__ View gather(const View& view, u64 prefix, int high) {
    if (threadIdx.x == 0) s_.list_size = 0;
    __syncthreads();
    for_each_candidate(view, [&](const Candidate& c) {
      if (!under_prefix(c.key, prefix, high)) return;
      const int slot = atomicAdd(&s_.list_size, 1);
      if (slot < kListCapacity) s_.list[slot] = id_of(c.key, view.id_bits);  // they fit
    });
    __syncthreads();
    View gathered = view;
    gathered.list = s_.list;
    gathered.list_size = s_.list_size < kListCapacity ? s_.list_size : kListCapacity;
    __syncthreads();
    return gathered;
  }

 private:
  __device__ static int lane() { return static_cast<int>(threadIdx.x) % 32; }
  __device__ static int warp() { return static_cast<int>(threadIdx.x) / 32; }

  __device__ u64 bucket_weight(const Weighting& w, int b) const {
    return w.by_mass ? s_.weights[b] : u64{s_.counts[b]};
  }

  // f(candidate) for this thread's share of the candidates.
  template <class F>
  __device__ static void for_each_candidate(const View& view, F&& f) {
    Candidate c;
    if (view.list != nullptr) {
      for (int j = threadIdx.x; j < view.list_size; j += kThreads) {
        const std::int32_t id = view.list[j];
        if (make_candidate(view, id, view.row[id], &c)) f(c);
      }
      return;
    }
    // The row: kLoadsInFlight loads issued before any is used, to keep the memory busy.
    for (int base = threadIdx.x; base < view.n; base += kThreads * kLoadsInFlight) {
      float raw[kLoadsInFlight];
#pragma unroll
      for (int k = 0; k < kLoadsInFlight; ++k) {
        const int i = base + k * kThreads;
        raw[k] = i < view.n ? view.row[i] : 0.0f;
      }
#pragma unroll
      for (int k = 0; k < kLoadsInFlight; ++k) {
        const int i = base + k * kThreads;
        if (i < view.n && make_candidate(view, i, raw[k], &c)) f(c);
      }
    }
  }

  template <class Op>
  __device__ u64 block_reduce(u64 v, Op op) {
    for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(kFullWarp, v, offset));
    if (lane() == 0) s_.warp_totals[0][warp()] = v;
    __syncthreads();
    u64 result = s_.warp_totals[0][0];
    for (int w = 1; w < kWarps; ++w) result = op(result, s_.warp_totals[0][w]);
    __syncthreads();
    return result;
  }

  SharedScratch& s_;
};

__global__ void __launch_bounds__(kThreads)
    sample_rows_kernel(const float* logits, int n, const lpx_sampling_program* programs,
                       std::int32_t* out) {
  __shared__ SharedScratch scratch;
  __shared__ lpx_sampling_program program;
  __shared__ float temperatures[LPX_SAMPLING_MAX_OPS];
  if (threadIdx.x == 0) {
    program = programs[blockIdx.x];
    collect_temperatures(program, temperatures);
  }
  __syncthreads();
  DeviceBlock block(scratch);
  Runner<DeviceBlock> runner(block, logits + static_cast<std::size_t>(blockIdx.x) * n, n,
                             temperatures);
  const std::int32_t token = runner.run(program);
  if (threadIdx.x == 0) out[blockIdx.x] = token;
}

// --- the host: the same questions as plain loops --------------------------------------------

class HostBlock {
 public:
  u64 min_key(const View& view) const {
    u64 least = kAllKeys;
    for_each_candidate(view, [&](const Candidate& c) {
      if (c.key < least) least = c.key;
    });
    return least;
  }

  double sum_exp(const View& view, float first_value) const {
    Fixed128 sum;
    for_each_candidate(view, [&](const Candidate& c) {
      sum = plus(sum, to_fixed(softmax_term(current_value(view, c.order_value), first_value)));
    });
    return to_double(sum);
  }

  AtLeast count_at_least(const View& view, double threshold) const {
    AtLeast result;
    for_each_candidate(view, [&](const Candidate& c) {
      if (static_cast<double>(current_value(view, c.order_value)) >= threshold) {
        ++result.count;
        if (c.key > result.last_key) result.last_key = c.key;
      }
    });
    return result;
  }

  void histogram(const View& view, u64 prefix, Digits digits, const Weighting& w) {
    counts_.assign(kBuckets, 0);
    weights_.assign(kBuckets, 0);
    for_each_candidate(view, [&](const Candidate& c) {
      if (!under_prefix(c.key, prefix, digits.high)) return;
      const std::uint32_t digit = digit_of(c.key, digits);
      ++counts_[digit];
      weights_[digit] += weight_of(view, w, c.order_value);
    });
  }

  Crossing choose_bucket(const Weighting& w, const Target& target, u64 weight_before) const {
    u64 total = 0;
    for (int b = 0; b < kBuckets; ++b) total += bucket_weight(w, b);
    Crossing crossing{};
    crossing.units = target.resolve(total);
    const u64 need = crossing.units > weight_before ? crossing.units - weight_before : 1;
    if (need > total) return crossing;
    u64 weight_below = 0;
    std::uint32_t count_below = 0;
    for (int b = 0; b < kBuckets; ++b) {
      const u64 bucket = bucket_weight(w, b);
      if (need <= weight_below + bucket) {
        crossing.found = true;
        crossing.digit = static_cast<std::uint32_t>(b);
        crossing.count_before = count_below;
        crossing.weight_before = weight_below;
        crossing.bucket_count = counts_[b];
        return crossing;
      }
      weight_below += bucket;
      count_below += counts_[b];
    }
    return crossing;  // not reached: need <= total
  }

  View gather(const View& view, u64 prefix, int high) {
    list_.clear();
    for_each_candidate(view, [&](const Candidate& c) {
      if (under_prefix(c.key, prefix, high)) list_.push_back(id_of(c.key, view.id_bits));
    });
    View gathered = view;
    gathered.list = list_.data();
    gathered.list_size = static_cast<int>(list_.size());
    return gathered;
  }

 private:
  u64 bucket_weight(const Weighting& w, int b) const {
    return w.by_mass ? weights_[b] : u64{counts_[b]};
  }

  template <class F>
  static void for_each_candidate(const View& view, F&& f) {
    Candidate c;
    if (view.list != nullptr) {
      for (int j = 0; j < view.list_size; ++j) {
        const std::int32_t id = view.list[j];
        if (make_candidate(view, id, view.row[id], &c)) f(c);
      }
      return;
    }
    for (int i = 0; i < view.n; ++i) {
      if (make_candidate(view, i, view.row[i], &c)) f(c);
    }
  }

  std::vector<std::uint32_t> counts_ = std::vector<std::uint32_t>(kBuckets);
  std::vector<u64> weights_ = std::vector<u64>(kBuckets);
  std::vector<std::int32_t> list_;
};

}  // namespace

void sample_rows(const float* logits, int rows, int n, const lpx_sampling_program* programs,
                 std::int32_t* out, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;  // no token to give
  sample_rows_kernel<<<rows, kThreads, 0, stream>>>(logits, n, programs, out);
}

std::int32_t sample_row_on_host(const float* logits, int n, const lpx_sampling_program& program) {
  if (n <= 0) return -1;
  float temperatures[LPX_SAMPLING_MAX_OPS] = {};
  collect_temperatures(program, temperatures);
  HostBlock block;
  Runner<HostBlock> runner(block, logits, n, temperatures);
  return runner.run(program);
}

}  // namespace lpx::kernels::cuda
