#include "generation.hpp"

#include <cstddef>

#include <boost/asio/post.hpp>

#include "openai_names.hpp"

namespace lpx::http {

Generation::Generation(std::shared_ptr<const RoutedModel> model, boost::asio::any_io_executor executor,
                       std::shared_ptr<GenerationSink> sink, ActiveGenerations& active)
    : model_(std::move(model)),
      engine_(model_->engine()),
      metrics_(*model_->metrics),
      executor_(std::move(executor)),
      sink_(std::move(sink)),
      active_(active),
      deadline_(executor_) {}

Generation::~Generation() { active_.remove(this); }

void Generation::start(GenerationRequest request, std::chrono::seconds deadline) {
  request_ = std::move(request);
  const std::uint32_t n = request_.choice_count();
  choices_.resize(n);
  remaining_ = n;
  self_ = shared_from_this();
  active_.add(this);
  GenerationRequest::Storage storage;
  for (std::uint32_t i = 0; i < n; ++i) {
    Choice& c = choices_[i];
    c.owner = this;
    c.index = i;
    lpx_request r = request_.engine_request(i, storage);
    r.user = &c;
    r.on_token = &Generation::on_engine_token;
    r.on_done = &Generation::on_engine_done;
    try {
      const std::uint64_t id = engine_.submit(r);
      std::lock_guard lock(ids_mutex_);
      c.engine_id = id;
    } catch (const Error& e) {
      // Choices 0..i-1 are in the engine and will call back; the rest never will.
      // The caller answers the error; their output is dropped.
      abandoned_ = true;
      remaining_ = i;
      for (std::uint32_t k = i; k < n; ++k) choices_[k].owner = nullptr;
      cancel();
      if (remaining_ == 0) self_.reset();
      throw openai::engine_refusal(request_.in_request_terms(e),
                                   request_.prompts.empty() ? "messages" : "prompt");
    }
  }
  deadline_.expires_after(deadline);
  deadline_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) {
      self->timed_out_ = true;
      self->cancel();
    }
  });
}

void Generation::cancel() noexcept {
  std::lock_guard lock(ids_mutex_);
  for (const Choice& c : choices_) {
    if (c.owner != nullptr && c.engine_id != 0) engine_.cancel(c.engine_id);
  }
}

std::int32_t Generation::on_engine_token(void* user, const lpx_token_event* event) {
  // Engine thread: copy what the event carries and hand it to the executor.
  Choice& c = *static_cast<Choice*>(user);
  Generation& g = *c.owner;
  const auto now = std::chrono::steady_clock::now();
  if (event->token >= 0) {
    if (c.last_token != std::chrono::steady_clock::time_point{}) {
      g.metrics_.observe_inter_token(std::chrono::duration<double>(now - c.last_token).count());
    }
    c.last_token = now;
  }
  TokenOutput out = token_output(*event);
  boost::asio::post(g.executor_, [self = g.shared_from_this(), i = c.index, out = std::move(out)]() mutable {
    if (!self->abandoned_) self->sink_->on_token(i, std::move(out));
  });
  return 0;
}

void Generation::on_engine_done(void* user, const lpx_request_result* r) {
  Choice& c = *static_cast<Choice*>(user);
  Generation& g = *c.owner;
  ChoiceOutcome o = choice_outcome(*r, g.timed_out_);
  if (o.completion_tokens > 0) g.metrics_.observe_time_to_first_token(o.ttft_ms / 1000.0);
  if (r->struct_size >= offsetof(lpx_request_result, queue_ms) + sizeof r->queue_ms) {
    g.metrics_.observe_queue_wait(r->queue_ms / 1000.0);
  }
  g.metrics_.observe_request(o.total_ms / 1000.0);
  boost::asio::post(g.executor_, [self = g.shared_from_this(), i = c.index, o = std::move(o)]() mutable {
    self->choice_done_here(i, o);
  });
}

void Generation::choice_done_here(std::uint32_t choice, ChoiceOutcome outcome) {
  if (!abandoned_) sink_->on_choice_done(choice, outcome);
  if (--remaining_ > 0) return;
  deadline_.cancel();
  if (!abandoned_) sink_->on_all_done();
  self_.reset();  // may destroy this
}

void ActiveGenerations::add(Generation* g) {
  std::lock_guard lock(mutex_);
  items_.insert(g);
}

void ActiveGenerations::remove(Generation* g) {
  std::lock_guard lock(mutex_);
  items_.erase(g);
}

std::size_t ActiveGenerations::count() const {
  std::lock_guard lock(mutex_);
  return items_.size();
}

void ActiveGenerations::cancel_all() {
  std::lock_guard lock(mutex_);
  for (Generation* g : items_) g->cancel();
}

}  // namespace lpx::http
