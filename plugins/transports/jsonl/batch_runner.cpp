#include "batch_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <unordered_map>

#include <lpx/cpp/host.hpp>
#include <lpx/cpp/models.hpp>

#include "api_error.hpp"
#include "batch_item.hpp"
#include "batch_output.hpp"
#include "generation_output.hpp"
#include "progress.hpp"
#include "run_directory.hpp"
#include "sha256_file.hpp"

namespace lpx::batch {
namespace {

using Clock = std::chrono::steady_clock;
namespace json = boost::json;

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string utc_iso_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// Reads the input one line at a time: (1-based number, text without the line break); blank
// lines are not inputs and are skipped.
class InputLines {
 public:
  explicit InputLines(const std::string& path) : in_(path), path_(path) {
    if (!in_) throw Error(LPX_ERR_IO, path + ": cannot be read");
  }
  bool next(std::uint64_t& number, std::string& line) {
    while (std::getline(in_, line)) {
      ++number_;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      number = number_;
      return true;
    }
    if (in_.bad()) throw Error(LPX_ERR_IO, path_ + ": read error");
    return false;
  }

 private:
  std::ifstream in_;
  std::string path_;
  std::uint64_t number_ = 0;
};

}  // namespace

struct BatchRunner::Job {
  BatchItem item;
  std::uint32_t attempts = 0;
  Clock::time_point not_before{};  // a retry waits until then
  Clock::time_point deadline{};
  std::uint64_t engine_id = 0;
  std::atomic<bool> timed_out{false};
  BatchRunner* runner = nullptr;
  // Written by the engine thread while in flight, read by run() once completed.
  openai::CollectedChoice answer;
};

struct BatchRunner::State {
  std::unique_ptr<RunDirectory> dir;
  std::string model_id, model_path, model_sha256, input_sha256, backend, started_at;
  std::uint32_t max_in_flight = 1;
  openai::RequestLimits limits;
  ProgressCounts counts;
  std::uint64_t retries = 0, prompt_tokens = 0, cached_tokens = 0;
  Clock::time_point started, last_summary;
  std::vector<std::unique_ptr<Job>> in_flight;
  std::vector<std::unique_ptr<Job>> waiting_retry;
};

BatchRunner::BatchRunner(const lpx_run_context& context, BatchOptions options)
    : context_(context), engine_(context), options_(std::move(options)), state_(std::make_unique<State>()) {
  // The model's served name (its file's stem, or [[models]].name) before ":ADAPTER".
  if (context.struct_size >= offsetof(lpx_run_context, models_api) + sizeof context.models_api &&
      context.models != nullptr) {
    for (const ModelListing& m : ModelsHandle(context).list()) {
      if (m.is_default) adapter_prefix_ = m.name + ":";
    }
  }
}

BatchRunner::~BatchRunner() = default;

void BatchRunner::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

bool BatchRunner::is_transient(const Job& job) const {
  const openai::ChoiceOutcome& o = job.answer.outcome;
  if (o.reason == LPX_FINISH_CANCELLED) return job.timed_out.load();
  return o.reason == LPX_FINISH_ERROR && o.error_code == LPX_ERR_RESOURCE_EXHAUSTED &&
         o.error.find("context is full") == std::string::npos;
}

void BatchRunner::submit(Job& job) {
  ++job.attempts;
  job.answer = {};
  job.timed_out = false;
  job.runner = this;
  openai::GenerationRequest::Storage storage;
  openai::GenerationRequest& request = job.item.request;
  if (!adapter_prefix_.empty() && request.model.starts_with(adapter_prefix_)) {
    request.adapter = request.model.substr(adapter_prefix_.size());
  }
  lpx_request r = request.engine_request(0, storage);
  r.user = &job;
  r.on_token = [](void* user, const lpx_token_event* event) -> std::int32_t {
    auto& j = *static_cast<Job*>(user);
    j.answer.text.append(event->text, event->text_length);
    if (event->chosen != nullptr) j.answer.logprob_tokens.push_back(openai::token_output(*event));
    return 0;
  };
  r.on_done = [](void* user, const lpx_request_result* result) {
    auto& j = *static_cast<Job*>(user);
    j.answer.outcome = openai::choice_outcome(*result, j.timed_out.load());
    {
      std::lock_guard lock(j.runner->mutex_);
      j.runner->completed_.push_back(&j);
    }
    j.runner->wake_.notify_all();
  };
  job.deadline = Clock::now() + options_.item_timeout;
  job.engine_id = engine_.submit(r);  // throws when refused: a deterministic failure
}

void BatchRunner::finish(std::unique_ptr<Job> job) {
  State& s = *state_;
  const openai::ChoiceOutcome& o = job->answer.outcome;
  const bool success = o.reason == LPX_FINISH_LENGTH || o.reason == LPX_FINISH_EOG ||
                       o.reason == LPX_FINISH_STOP;
  s.counts.tokens += o.completion_tokens;
  if (success) {
    if (o.reason == LPX_FINISH_EOG && !job->answer.logprob_tokens.empty()) job->answer.logprob_tokens.pop_back();
    s.dir->results().append(result_line(job->item, job->answer, s.model_id, job->attempts));
    s.prompt_tokens += o.prompt_tokens;
    s.cached_tokens += o.cached_tokens;
    ++s.counts.ok;
    return;
  }
  if (stopping_) return;  // cancelled by the stop: not written, it runs again on --resume
  const bool timeout = job->timed_out.load();
  const std::string error =
      timeout ? "timed out after " + std::to_string(options_.item_timeout.count() / 1000.0).substr(0, 6) + " s"
              : (o.error.empty() ? std::string("cancelled") : o.error);
  if (is_transient(*job) && job->attempts < options_.max_attempts) {
    const auto backoff = options_.retry_backoff * (1u << std::min<std::uint32_t>(job->attempts - 1, 16));
    s.dir->log("input '" + job->item.key + "' (line " + std::to_string(job->item.line) + "), attempt " +
               std::to_string(job->attempts) + ": " + error + "; retrying in " +
               std::to_string(backoff.count()) + " ms");
    job->not_before = Clock::now() + backoff;
    ++s.retries;
    s.waiting_retry.push_back(std::move(job));
    return;
  }
  s.dir->failures().append(failure_line(job->item, timeout ? "timeout" : "engine_error", error, job->attempts));
  ++s.counts.failed;
}

void BatchRunner::run() {
  State& s = *state_;
  s.started = Clock::now();
  s.started_at = utc_iso_now();
  const lpx_engine_info info = engine_.info();
  s.model_path = info.model_path ? info.model_path : "";
  s.model_id = std::filesystem::path(s.model_path).stem().string();
  s.backend = info.backend ? info.backend : "";
  s.limits.max_tokens = info.context_size;
  const std::string_view chat_template = info.chat_template ? info.chat_template : "";
  s.limits.tool_syntax = openai::detect_tool_syntax(chat_template);
  s.limits.system_role = openai::template_takes_system_role(chat_template);
  s.max_in_flight = options_.max_in_flight ? options_.max_in_flight : 2 * info.max_sequences;
  const ItemDefaults defaults{options_.default_max_tokens, s.limits};
  const auto in_shard = [&](const std::string& key) {
    return !options_.shard || fnv1a(key) % options_.shard->count == options_.shard->index;
  };

  // Pass 1: every id once (whole input, so shards of one file cannot collide), the shard's size.
  s.input_sha256 = sha256_file(options_.input);
  {
    InputLines lines(options_.input);
    std::unordered_map<std::string, std::uint64_t> first_line;
    std::vector<std::string> duplicates;
    std::uint64_t number = 0;
    std::string line;
    while (lines.next(number, line)) {
      const BatchItem item = read_batch_item(number, line, defaults);
      if (item.has_id) {
        const auto [it, inserted] = first_line.emplace(item.key, number);
        if (!inserted && duplicates.size() < 10) {
          duplicates.push_back("'" + item.key + "' on lines " + std::to_string(it->second) + " and " +
                               std::to_string(number));
        }
        if (!inserted) continue;
      }
      if (in_shard(item.key)) ++s.counts.total;
    }
    if (!duplicates.empty()) {
      std::string list;
      for (const std::string& d : duplicates) list += "\n  " + d;
      throw Error(LPX_ERR_INVALID_ARGUMENT,
                  options_.input + ": duplicate ids (every id must be unique; nothing was run):" + list);
    }
  }
  // The host's record of the run (machine, GPUs, model hashes) goes into the summary whole; it
  // hashed the model already.
  json::value run_record;
  if (context_.struct_size >= offsetof(lpx_run_context, run_record_json) + sizeof(void*) &&
      context_.run_record_json != nullptr) {
    run_record = json::parse(context_.run_record_json);
    for (const json::value& m : run_record.at("models").as_array()) {
      if (m.at("path").as_string() == s.model_path) s.model_sha256 = std::string(m.at("sha256").as_string());
    }
  }
  if (s.model_sha256.empty()) s.model_sha256 = sha256_file(s.model_path);
  const std::string shard_text =
      options_.shard ? std::to_string(options_.shard->index) + "/" + std::to_string(options_.shard->count) : "";
  s.dir = std::make_unique<RunDirectory>(options_, RunRecord{options_.input, s.input_sha256, shard_text});
  s.counts.done_before = s.dir->done().size();
  s.counts.failed_before = s.dir->done_failed();
  s.dir->log(std::string(s.dir->resumed() ? "resumed" : "started") + ": " + std::to_string(s.counts.total) +
             " inputs, " + std::to_string(s.counts.done_before) + " already done, up to " +
             std::to_string(s.max_in_flight) + " in flight");
  log_info("run directory " + s.dir->path().string() + ": " + std::to_string(s.counts.total) + " inputs" +
           (s.counts.done_before ? ", " + std::to_string(s.counts.done_before) + " done before" : std::string()));

  Progress progress(options_.progress, options_.log_interval);
  const auto snapshot = [&] {
    s.counts.in_flight = s.in_flight.size();
    s.counts.elapsed_s = std::chrono::duration<double>(Clock::now() - s.started).count();
    return s.counts;
  };
  const auto summary = [&](const char* status) {
    const ProgressCounts c = snapshot();
    const double wall = c.elapsed_s;
    json::object out{
        {"status", status},
        {"run_dir", s.dir->path().string()},
        {"input", options_.input},
        {"input_sha256", s.input_sha256},
        {"shard", shard_text.empty() ? json::value() : json::value(shard_text)},
        {"counts", {{"inputs", c.total},
                    {"ok", s.dir->done_ok() + c.ok},
                    {"failed", s.dir->done_failed() + c.failed},
                    {"remaining", c.total - std::min(c.total, c.done_before + c.ok + c.failed)}}},
        {"this_run", {{"ok", c.ok},
                      {"failed", c.failed},
                      {"retries", s.retries},
                      {"prompt_tokens", s.prompt_tokens},
                      {"cached_prompt_tokens", s.cached_tokens},  // reused from the prefix cache
                      {"completion_tokens", c.tokens},
                      {"wall_time_s", wall},
                      {"prompts_per_s", wall > 0 ? static_cast<double>(c.ok + c.failed) / wall : 0.0},
                      {"tokens_per_s", wall > 0 ? static_cast<double>(c.tokens) / wall : 0.0},
                      {"started_at", s.started_at},
                      {"updated_at", utc_iso_now()}}},
        {"lpx", {{"version", context_.host_version ? context_.host_version : "unknown"},
                 {"commit", context_.host_commit ? context_.host_commit : "unknown"}}},
        {"model", {{"name", info.model_name ? info.model_name : ""},
                   {"path", s.model_path},
                   {"sha256", s.model_sha256}}},
        {"device", {{"backend", s.backend}}},
        {"configuration", context_.resolved_pipeline ? context_.resolved_pipeline : ""},
        {"run", run_record}};
    s.dir->write_summary(out);
    s.last_summary = Clock::now();
  };
  summary("running");

  // One turn of the loop: write what finished, cancel what ran out of time, wait for news.
  const auto turn = [&](bool may_block) {
    std::deque<Job*> done;
    {
      std::unique_lock lock(mutex_);
      if (may_block && completed_.empty() && !stopping_) {
        Clock::time_point until = Clock::now() + std::chrono::milliseconds(200);
        for (const auto& j : s.in_flight) until = std::min(until, j->deadline);
        for (const auto& j : s.waiting_retry) until = std::min(until, j->not_before);
        wake_.wait_until(lock, until, [&] { return !completed_.empty() || stopping_; });
      }
      done.swap(completed_);
    }
    for (Job* finished : done) {
      auto it = std::find_if(s.in_flight.begin(), s.in_flight.end(),
                             [&](const std::unique_ptr<Job>& j) { return j.get() == finished; });
      std::unique_ptr<Job> job = std::move(*it);
      s.in_flight.erase(it);
      finish(std::move(job));
    }
    const auto now = Clock::now();
    for (const auto& j : s.in_flight) {
      if (now >= j->deadline && !j->timed_out.exchange(true)) engine_.cancel(j->engine_id);
    }
    progress.update(snapshot());
    if (now - s.last_summary >= std::chrono::seconds(10)) summary("running");
  };
  const auto start = [&](std::unique_ptr<Job> job) {
    try {
      submit(*job);
      s.in_flight.push_back(std::move(job));
    } catch (const Error& e) {  // refused by the engine (prompt too long, bad parameter)
      // Deterministic: the same line would be refused again. The code and field come from the
      // engine's status, as the HTTP server answers them (openai::engine_refusal).
      const openai::ApiError answer =
          openai::engine_refusal(job->item.request.in_request_terms(e),
                                 job->item.request.prompts.empty() ? "messages" : "prompt");
      const std::string code = answer.status() >= 500   ? "engine_error"
                               : answer.code().empty() ? "invalid_request"
                                                       : answer.code();
      s.dir->failures().append(failure_line(job->item, code, e.what(), job->attempts,
                                            answer.param()));
      ++s.counts.failed;
    }
  };
  const auto start_ready_retries = [&] {
    const auto now = Clock::now();
    for (auto it = s.waiting_retry.begin(); it != s.waiting_retry.end() && s.in_flight.size() < s.max_in_flight;) {
      if ((*it)->not_before <= now) {
        std::unique_ptr<Job> job = std::move(*it);
        it = s.waiting_retry.erase(it);
        start(std::move(job));
      } else {
        ++it;
      }
    }
  };

  // Pass 2: run what is not done yet.
  {
    InputLines lines(options_.input);
    std::uint64_t number = 0;
    std::string line;
    while (!stopping_ && lines.next(number, line)) {
      auto job = std::make_unique<Job>();
      job->item = read_batch_item(number, line, defaults);
      const std::string& key = job->item.key;
      if (!in_shard(key) || s.dir->done().count(key) != 0) continue;
      if (!job->item.error.empty()) {
        s.dir->failures().append(failure_line(job->item, "invalid_request", job->item.error, 0));
        ++s.counts.failed;
        continue;
      }
      while (!stopping_ && s.in_flight.size() >= s.max_in_flight) {
        turn(true);
        start_ready_retries();
      }
      if (stopping_) break;
      start(std::move(job));
      turn(false);
      start_ready_retries();
    }
  }
  while (!stopping_ && (!s.in_flight.empty() || !s.waiting_retry.empty())) {
    turn(true);
    start_ready_retries();
  }

  if (stopping_) {
    for (const auto& j : s.in_flight) engine_.cancel(j->engine_id);
    while (!s.in_flight.empty()) {  // cancelled at the engine's next step; their answers are
      {                              // dropped (those inputs run again on resume)
        std::unique_lock lock(mutex_);
        wake_.wait_for(lock, std::chrono::milliseconds(100), [&] { return !completed_.empty(); });
      }
      turn(false);
    }
    s.dir->results().sync();
    s.dir->failures().sync();
    summary("interrupted");
    progress.finish(snapshot());
    const ProgressCounts c = snapshot();
    const std::uint64_t left = c.total - std::min(c.total, c.done_before + c.ok + c.failed);
    s.dir->log("interrupted: " + std::to_string(left) + " inputs left");
    throw Error(LPX_ERR_INCOMPLETE, std::to_string(left) + " of " + std::to_string(c.total) +
                                        " inputs not done; finish with --resume --run-dir " +
                                        s.dir->path().string());
  }
  s.dir->results().sync();
  s.dir->failures().sync();
  summary("complete");
  progress.finish(snapshot());
  const ProgressCounts c = snapshot();
  s.dir->log("complete: " + std::to_string(s.dir->done_ok() + c.ok) + " ok, " +
             std::to_string(s.dir->done_failed() + c.failed) + " failed");
  log_info("done: " + std::to_string(s.dir->done_ok() + c.ok) + " ok, " +
           std::to_string(s.dir->done_failed() + c.failed) + " failed; " + s.dir->path().string());
}

}  // namespace lpx::batch
