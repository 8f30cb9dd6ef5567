#include "reference/sampling_program.hpp"

#include <cmath>

#include <lpx/cpp/sampling_ops.hpp>

namespace lpx::reference {
namespace {

bool selects(std::uint32_t kind) {
  return kind == LPX_SAMPLING_GREEDY || kind == LPX_SAMPLING_DIST;
}

std::string check_op(const lpx_sampling_op& op) {
  const bool finite = std::isfinite(op.value);
  switch (op.kind) {
    case LPX_SAMPLING_TEMPERATURE:
      return finite && op.value >= 0 ? "" : "temperature must be >= 0";
    case LPX_SAMPLING_TOP_K:
      return "";
    case LPX_SAMPLING_TOP_P:
    case LPX_SAMPLING_MIN_P:
      return finite && op.value >= 0 && op.value <= 1 ? "" : "p must be within [0, 1]";
    case LPX_SAMPLING_GREEDY:
    case LPX_SAMPLING_DIST:
      return "";
    default:
      return "unknown operation " + std::to_string(op.kind);
  }
}

}  // namespace

std::string check_sampling_program(const lpx_sampling_program& program) {
  if (program.n_ops == 0 || program.n_ops > LPX_SAMPLING_MAX_OPS) {
    return "a sampling program has 1 to " + std::to_string(LPX_SAMPLING_MAX_OPS) + " operations";
  }
  for (std::uint32_t i = 0; i < program.n_ops; ++i) {
    if (std::string why = check_op(program.ops[i]); !why.empty()) {
      return "operation " + std::to_string(i) + ": " + why;
    }
    if (selects(program.ops[i].kind) != (i + 1 == program.n_ops)) {
      return "only the last operation of a sampling program selects, and it must";
    }
  }
  if (!(program.uniform >= 0 && program.uniform < 1)) return "uniform must be within [0, 1)";
  return "";
}

std::int32_t run_sampling_program(const lpx_sampling_program& program, const float* logits,
                                  std::size_t n_vocab, lpx_token_candidate* scratch) {
  for (std::size_t i = 0; i < n_vocab; ++i) {
    scratch[i] = {static_cast<std::int32_t>(i), logits[i], 0.0f};
  }
  lpx_candidates c{scratch, n_vocab, -1, 0, 0, 0};
  for (std::uint32_t i = 0; i < program.n_ops; ++i) {
    const lpx_sampling_op& op = program.ops[i];
    c.selected = -1;
    switch (op.kind) {
      case LPX_SAMPLING_TEMPERATURE:
        samplers::apply_temperature(c, static_cast<float>(op.value));
        break;
      case LPX_SAMPLING_TOP_K: samplers::apply_top_k(c, op.count); break;
      case LPX_SAMPLING_TOP_P: samplers::apply_top_p(c, op.value, op.count); break;
      case LPX_SAMPLING_MIN_P: samplers::apply_min_p(c, op.value, op.count); break;
      case LPX_SAMPLING_GREEDY: samplers::select_greedy(c); break;
      case LPX_SAMPLING_DIST: samplers::select_by_probability(c, program.uniform); break;
      default: break;
    }
  }
  return c.selected >= 0 ? c.data[c.selected].id : -1;
}

}  // namespace lpx::reference
