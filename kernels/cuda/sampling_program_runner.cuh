// sample_rows' algorithm (sampling_program.cu), written once for both sides: the keys that
// order the candidates, the radix descent over them, the fixed-point sums and the program's
// interpretation (Runner), all __host__ __device__. Runner asks its block-wide questions of a
// Block: sampling_program.cu answers them with a thread block (DeviceBlock, in sample_rows) and
// with plain loops (HostBlock, in sample_row_on_host), so the tests can check the algorithm
// against the reference where no GPU is usable. Private to sampling_program.cu.
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
// Sums are integers, so nothing depends on summation order, thread timing, the block's thread
// count or the other rows: the softmax sum of exp(l - max) is accumulated in 128-bit fixed point
// (2^-96 units, then rounded to double), each probability is float(exp(l - max) / sum) as in the
// reference, and running masses are sums of those floats in 2^-62 units (64 bits). launch.hpp
// gives the resulting bound against the reference, which adds in double in candidate order.
#pragma once

#include <lpx/kinds/sampling_program.h>

#include <cfloat>
#include <cstdint>

#include "cuda/device_math.cuh"

namespace lpx::kernels::cuda::sampling {

// Runner below is compiled for both sides; nvcc must not complain that its host instance calls
// DeviceBlock, or its device instance HostBlock: neither instance is ever called there.
#define LPX_EITHER_SIDE _Pragma("nv_exec_check_disable") __host__ __device__

using u64 = unsigned long long;  // the type of CUDA's 64-bit atomics and shuffles
static_assert(sizeof(u64) == 8);

constexpr int kValueBits = 32;                      // the logit part of a key
constexpr int kDigitBits = 11;                      // key bits one descent level decides
constexpr int kBuckets = 1 << kDigitBits;
constexpr int kListCapacity = 1024;  // candidates gathered into shared memory (launch.hpp says 1024)
constexpr double kMassUnitsPerOne = 0x1p62;         // probabilities in 2^-62 units
constexpr int kSumFractionBits = 96;                // the softmax sum in 2^-96 units
constexpr u64 kAllKeys = ~u64{0};
constexpr std::uint32_t kNaNBits = 0xFFFFFFFFu;     // after -inf, whose bits are 0xFF800000

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
  const std::uint32_t bits = detail::float_bits(v);
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
  const u64 bits = detail::double_bits(x);
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
  return detail::exp_libm(static_cast<double>(value) - static_cast<double>(first));
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
    const double threshold = detail::add_rn(static_cast<double>(first_value()), detail::log_libm(p));
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

}  // namespace lpx::kernels::cuda::sampling
