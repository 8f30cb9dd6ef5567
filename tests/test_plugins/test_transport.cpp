// test-transport: a transport for the test suite. It writes the options it received to `output`
// (one "key=value" line each), exercises the host API, and can fail or wait for a stop on demand.
#include <condition_variable>
#include <fstream>
#include <mutex>

#include <lpx/cpp/plugin.hpp>

namespace {

class TestTransport final : public lpx::Transport {
 public:
  explicit TestTransport(const lpx::Options& options)
      : output_(options.get_string("output")),
        message_(options.get_string("message")),
        mode_(options.get_string("mode")),
        count_(options.get_int("count")),
        ratio_(options.get_float("ratio")),
        loud_(options.get_bool("loud")),
        tags_(options.get_string_list("tags")),
        ids_(options.get_int_list("ids")) {
    if (output_.empty()) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "output: must not be empty");
  }

  static void validate(const lpx::Options& options) {
    if (options.get_bool("loud") && options.get_int("count") > 10) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "count: must be at most 10 when loud = true");
    }
  }

  void run(const lpx_run_context& context) override {
    if (mode_ == "fail") throw lpx::Error(LPX_ERR_IO, "failing on purpose (mode = \"fail\")");
    if (mode_ == "wait") {
      write("waiting");
      std::unique_lock lock(mutex_);
      stopped_.wait(lock, [this] { return stop_requested_; });
    }
    lpx_metric_id id = 0;
    const lpx_host_api* host = lpx::host();
    lpx::throw_if_error(host->metric_register(host->context, LPX_METRIC_COUNTER, "test_runs",
                                              "Runs of test-transport", nullptr, 0, &id));
    host->metric_record(host->context, id, 1);
    lpx::log_info("writing " + output_);

    std::string text = "pipeline=" + std::string(context.pipeline_name) + "\n";
    text += "message=" + message_ + "\ncount=" + std::to_string(count_) +
            "\nratio=" + std::to_string(ratio_) + "\nloud=" + (loud_ ? "true" : "false") +
            "\ntags=";
    for (const std::string& tag : tags_) text += tag + ",";
    text += "\nids=";
    for (std::int64_t id_value : ids_) text += std::to_string(id_value) + ",";
    text += "\n";
    if (mode_ == "wait") text += "stopped\n";
    write(text);
  }

  void request_stop() noexcept override {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    stopped_.notify_all();
  }

 private:
  void write(const std::string& text) const {
    std::ofstream out(output_, std::ios::trunc);
    out << text;
    if (!out) throw lpx::Error(LPX_ERR_IO, "cannot write " + output_);
  }

  std::string output_, message_, mode_;
  std::int64_t count_;
  double ratio_;
  bool loud_;
  std::vector<std::string> tags_;
  std::vector<std::int64_t> ids_;
  std::mutex mutex_;
  std::condition_variable stopped_;
  bool stop_requested_ = false;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::required(lpx::option("output", LPX_OPTION_STRING, nullptr, "File to write")),
    lpx::option("message", LPX_OPTION_STRING, "\"hello\"", "Text to write"),
    lpx::one_of(lpx::option("mode", LPX_OPTION_STRING, "\"echo\"", "echo, fail or wait"),
                "echo|fail|wait"),
    lpx::in_range(lpx::option("count", LPX_OPTION_INT, "1", "A bounded integer"), 0, 100),
    lpx::in_range(lpx::option("ratio", LPX_OPTION_FLOAT, "0.5", "A bounded float"), 0, 1),
    lpx::option("loud", LPX_OPTION_BOOL, "false", "A flag"),
    lpx::option("tags", LPX_OPTION_STRING_LIST, "[]", "Some strings"),
    lpx::option("ids", LPX_OPTION_INT_LIST, "[]", "Some integers"),
};
constexpr const char* kCapabilities[] = {"transport:test"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<TestTransport>({.name = "test-transport",
                                       .version = "0.0.1",
                                       .license = "Apache-2.0",
                                       .description = "Writes its options to a file (tests only)",
                                       .options = kOptions,
                                       .capabilities = kCapabilities});
}
