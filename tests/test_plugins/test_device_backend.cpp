// test-device: a device backend (model_load / model_forward) with no device, so the
// engine's device path — block tables, sequence rows, output rows, device-side greedy and
// sampling programs — runs in CI without a GPU. Its "model" keeps one token per KV slot,
// written through the block tables the engine sends, and predicts next = (sum of the
// sequence's tokens read back through those tables, the current row's included, + 1) mod
// n_vocab: the logits peak there and fall off with the distance to it, so sampling has a real
// distribution to draw from. A wrong block table, position or row mapping reads back a wrong
// history and changes the tokens; a broken invariant of lpx_forward_args fails the step with
// the reason, and so does the token n_vocab - 1 (how the tests make a step fail; n_vocab - 2
// fails it as a lost device, LPX_ERR_UNAVAILABLE). It runs only the features Llama and Qwen2
// need (q/k/v biases, rope factors), and a description needing any other is a broken host: the
// engine must refuse such a model before model_load. Queued steps (ABI 2.8) run as late as the
// contract allows (deferred_steps.hpp), or, with the option queue = "sdk", as the SDK's
// defaults run them: at once, in model_enqueue.
#include <lpx/cpp/plugin.hpp>

#include "deferred_steps.hpp"

#include "reference/sampling_program.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

[[noreturn]] void broken(const std::string& what, lpx_status_code code = LPX_ERR_INTERNAL) {
  throw lpx::Error(code, "test-device: " + what);
}

class SlotModel final : public lpx::DeviceModel {
 public:
  SlotModel(const lpx_transformer_desc& d, bool deferred)
      : deferred_(deferred),
        n_vocab_(d.n_vocab),
        block_size_(d.kv_block_size),
        kv_blocks_(d.kv_blocks),
        max_rows_(d.max_rows),
        max_sequences_(d.max_sequences),
        max_context_(d.max_context),
        slots_(std::size_t{d.kv_blocks} * d.kv_block_size, -1) {}

  void enqueue(const lpx_forward_args& a) override {
    if (deferred_) {
      queue_.push(a);
    } else {
      lpx::DeviceModel::enqueue(a);
    }
  }
  void wait() override {
    if (deferred_) queue_.run_oldest([&](const lpx_forward_args& step) { forward(step); });
  }

  void forward(const lpx_forward_args& a) override {
    if (a.n_rows == 0 || a.n_rows > max_rows_) broken("n_rows " + std::to_string(a.n_rows));
    if (a.n_sequences == 0 || a.n_sequences > max_sequences_) broken("n_sequences");
    if (a.n_outputs > max_sequences_) broken("more outputs than max_sequences");
    if (a.sequence_rows[0] != 0 || a.sequence_rows[a.n_sequences] != a.n_rows) {
      broken("sequence_rows do not cover the rows");
    }
    if ((a.logits == nullptr) == (a.argmax == nullptr)) broken("exactly one output kind expected");
    if (a.sampling != nullptr && a.argmax == nullptr) broken("sampling programs without argmax");
    for (std::uint32_t r = 0; r < a.n_rows; ++r) {  // the tests' way to make a step fail
      if (a.tokens[r] == static_cast<std::int32_t>(n_vocab_) - 1) broken("the failing token");
      if (a.tokens[r] == static_cast<std::int32_t>(n_vocab_) - 2) {
        broken("the device was lost", LPX_ERR_UNAVAILABLE);
      }
    }
    std::vector<std::int64_t> history(a.n_rows);
    for (std::uint32_t s = 0; s < a.n_sequences; ++s) {
      const std::int32_t* table = a.block_tables + std::size_t{s} * a.block_table_stride;
      for (std::uint32_t r = a.sequence_rows[s]; r < a.sequence_rows[s + 1]; ++r) {
        const std::int32_t p = a.positions[r];
        if (p < 0 || static_cast<std::uint32_t>(p) >= max_context_) broken("position " + std::to_string(p));
        slot(table, p) = a.tokens[r];
      }
      for (std::uint32_t r = a.sequence_rows[s]; r < a.sequence_rows[s + 1]; ++r) {
        std::int64_t sum = 0;
        for (std::int32_t t = 0; t <= a.positions[r]; ++t) {
          const std::int32_t token = slot(table, t);
          if (token < 0) broken("position " + std::to_string(t) + " was never written");
          sum += token;
        }
        history[r] = sum;
      }
    }
    for (std::uint32_t o = 0; o < a.n_outputs; ++o) {
      if (a.output_rows[o] >= a.n_rows || (o > 0 && a.output_rows[o] <= a.output_rows[o - 1])) {
        broken("output_rows not ascending rows");
      }
      const auto next = static_cast<std::int32_t>((history[a.output_rows[o]] + 1) % n_vocab_);
      float* row = a.logits != nullptr ? a.logits + std::size_t{o} * n_vocab_ : row_.data();
      for (std::uint32_t i = 0; i < n_vocab_; ++i) {
        row[i] = -kFalloff * static_cast<float>(std::abs(static_cast<std::int64_t>(i) - next));
      }
      if (a.argmax == nullptr) continue;
      if (a.sampling == nullptr) {
        a.argmax[o] = next;
        continue;
      }
      if (std::string why = lpx::reference::check_sampling_program(a.sampling[o]); !why.empty()) {
        broken("sampling program " + std::to_string(o) + ": " + why);
      }
      a.argmax[o] =
          lpx::reference::run_sampling_program(a.sampling[o], row, n_vocab_, candidates_.data());
    }
  }

 private:
  std::int32_t& slot(const std::int32_t* table, std::int32_t position) {
    const std::int32_t block = table[position / static_cast<std::int32_t>(block_size_)];
    if (block < 0 || static_cast<std::uint32_t>(block) >= kv_blocks_) {
      broken("block " + std::to_string(block) + " out of range");
    }
    return slots_[static_cast<std::size_t>(block) * block_size_ + position % block_size_];
  }

  static constexpr float kFalloff = 0.5f;  // logit lost per token of distance from `next`

  bool deferred_;
  lpx::test_device::DeferredSteps queue_;
  std::uint32_t n_vocab_, block_size_, kv_blocks_, max_rows_, max_sequences_, max_context_;
  std::vector<std::int32_t> slots_;
  std::vector<float> row_ = std::vector<float>(n_vocab_);  // logits kept "on the device"
  std::vector<lpx_token_candidate> candidates_ = std::vector<lpx_token_candidate>(n_vocab_);
};

class TestDeviceBackend final : public lpx::DeviceBackend {
 public:
  explicit TestDeviceBackend(const lpx::Options& options)
      : deferred_(options.get_string("queue") == "deferred") {}

  bool supports_type(std::int32_t type) const noexcept override { return type >= 1 && type <= 12; }
  static constexpr std::uint64_t kFeatures = LPX_FEATURE_QKV_BIAS | LPX_FEATURE_ROPE_FACTORS;
  std::uint64_t model_features() const noexcept override { return kFeatures; }

  std::unique_ptr<lpx::DeviceModel> load_model(const lpx_transformer_desc& desc,
                                                lpx_device_model_info& info) override {
    if (desc.token_embd == nullptr || desc.output == nullptr || desc.layers == nullptr ||
        desc.layer_stride < sizeof(lpx_transformer_layer)) {
      broken("model description without tensors");
    }
    if ((desc.features & ~kFeatures) != 0) broken("handed a model needing features it lacks");
    info.kv_cache_bytes = std::uint64_t{desc.kv_blocks} * desc.kv_block_size * sizeof(std::int32_t);
    info.device_name = "test-device (host memory)";
    return std::make_unique<SlotModel>(desc, deferred_);
  }

  void reserve(const lpx_backend_limits&) override {}
  void matmul(const lpx_tensor_view&, const float*, float*, std::size_t) override { per_op(); }
  void dequantize_row(const lpx_tensor_view&, std::int64_t, float*) override { per_op(); }
  void rms_norm(const float*, const float*, float*, std::size_t, std::size_t, float) override {
    per_op();
  }
  void rope(float*, std::size_t, std::size_t, std::size_t, const std::int32_t*,
            const lpx_rope_params&) override {
    per_op();
  }
  void swiglu(const float*, const float*, float*, std::size_t) override { per_op(); }
  void geglu(const float*, const float*, float*, std::size_t) override { per_op(); }
  void attention(const lpx_attention_args&) override { per_op(); }

 private:
  bool deferred_;  // queued steps run in model_wait (else at once, as the SDK's defaults do)

  [[noreturn]] static void per_op() {
    throw lpx::Error(LPX_ERR_UNSUPPORTED, "test-device runs whole steps only (model_forward)");
  }
};

constexpr lpx_option_spec kOptions[] = {
    lpx::one_of(lpx::option("queue", LPX_OPTION_STRING, "\"deferred\"",
                            "Queued steps run in model_wait (deferred) or in model_enqueue (sdk)"),
                "deferred|sdk"),
};
// "queued-steps" in both queue modes: with "sdk" the engine queues onto the SDK's defaults,
// which run the step in model_enqueue (correct, with nothing to overlap), to test them.
constexpr const char* kCapabilities[] = {"device-models", "device-sampling", "queued-steps"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<TestDeviceBackend>(
      {.name = "test-device",
       .version = "1.0.0",
       .license = "Apache-2.0",
       .description = "Device-model backend for the engine's tests: KV slots in host memory",
       .options = kOptions,
       .capabilities = kCapabilities});
}
