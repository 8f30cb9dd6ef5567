// test-device's queued steps (ABI 2.8, model_enqueue / model_wait) run as late as the contract
// allows: model_enqueue copies the step, as a device copies its inputs up, and the step runs
// only inside the model_wait that completes it. A host that reads a pick before its wait, or
// counts on a step having run, gets a stale token; one that changes an input after queueing
// changes nothing. A row with previous_outputs takes the pick of the step run before it, and
// a step queued behind a failed one fails too, as the contract says.
#pragma once

#include <cstdint>
#include <deque>
#include <stdexcept>
#include <string>
#include <vector>

#include <lpx/cpp/plugin.hpp>

namespace lpx::test_device {

class DeferredSteps {
 public:
  void push(const lpx_forward_args& a) {
    Step s;
    s.tokens.assign(a.tokens, a.tokens + a.n_rows);
    s.positions.assign(a.positions, a.positions + a.n_rows);
    s.sequence_rows.assign(a.sequence_rows, a.sequence_rows + a.n_sequences + 1);
    s.block_tables.assign(a.block_tables,
                          a.block_tables + std::size_t{a.n_sequences} * a.block_table_stride);
    s.output_rows.assign(a.output_rows, a.output_rows + a.n_outputs);
    if (a.sampling != nullptr) s.programs.assign(a.sampling, a.sampling + a.n_outputs);
    if (const std::int32_t* previous = lpx::previous_outputs(a)) {
      s.previous_outputs.assign(previous, previous + a.n_rows);
    }
    s.args = a;
    steps_.push_back(std::move(s));
  }

  // Runs the oldest step through `forward` (the model's own step) with its previous picks in
  // place, and keeps its picks for the step behind it.
  template <class Forward>
  void run_oldest(Forward&& forward) {
    Step s = std::move(steps_.front());
    steps_.pop_front();
    try {
      if (s.doomed) {
        throw Error(LPX_ERR_INTERNAL, "test-device: a step queued before this one failed");
      }
      for (std::size_t r = 0; r < s.previous_outputs.size(); ++r) {
        const std::int32_t o = s.previous_outputs[r];
        if (o < 0) continue;
        if (static_cast<std::size_t>(o) >= picks_.size()) {
          throw Error(LPX_ERR_INTERNAL, "test-device: previous output " + std::to_string(o) +
                                            " was not picked (the host let it through)");
        }
        s.tokens[r] = picks_[static_cast<std::size_t>(o)];
      }
      lpx_forward_args a = s.args;
      a.tokens = s.tokens.data();
      a.positions = s.positions.data();
      a.sequence_rows = s.sequence_rows.data();
      a.block_tables = s.block_tables.data();
      a.output_rows = s.output_rows.data();
      a.sampling = s.programs.empty() ? nullptr : s.programs.data();
      a.previous_outputs = nullptr;
      picks_.clear();
      forward(a);
      picks_.assign(a.argmax, a.argmax + a.n_outputs);
    } catch (...) {
      picks_.clear();
      for (Step& behind : steps_) behind.doomed = true;
      throw;
    }
  }

 private:
  struct Step {
    lpx_forward_args args{};  // its pointers replaced by the copies below when it runs
    std::vector<std::int32_t> tokens, positions, block_tables, previous_outputs;
    std::vector<std::uint32_t> sequence_rows, output_rows;
    std::vector<lpx_sampling_program> programs;
    bool doomed = false;  // a step queued before it failed
  };
  std::deque<Step> steps_;
  std::vector<std::int32_t> picks_;  // the last step run's
};

}  // namespace lpx::test_device
