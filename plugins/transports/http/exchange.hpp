// One request's way back to its client, as the API handlers see it: a whole response, or a
// stream of events (server-sent events over HTTP, text frames over a WebSocket). Implemented by
// HttpConnection and WebSocketSession. Every call is made on executor() (the connection's strand).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/any_io_executor.hpp>

#include "access_log.hpp"
#include "openai_names.hpp"

namespace lpx::http {

class Exchange {
 public:
  virtual ~Exchange() = default;

  virtual boost::asio::any_io_executor executor() = 0;
  virtual void respond(int status, std::string body, const char* content_type) = 0;
  virtual void respond_error(const ApiError& error) = 0;
  // Events: begin once, send any number, end once. An event is one JSON payload (or "[DONE]").
  virtual void begin_events() = 0;
  virtual void send_event(std::string payload) = 0;
  virtual void end_events() = 0;
  // `on_gone` runs (once, on the executor) if the client goes away before the exchange ends.
  virtual void watch_disconnect(std::function<void()> on_gone) = 0;
  // The current request's access-log entry; whoever must still add to it keeps a copy.
  virtual std::shared_ptr<AccessEntry> access() = 0;
};

}  // namespace lpx::http
