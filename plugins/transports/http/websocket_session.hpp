// GET /v1/ws: a WebSocket where each text message is a completions or chat body (a body with
// "messages" is chat) and the answer comes back as the same events as server-sent events, one
// text frame each, ending with "[DONE]". One request at a time per socket; closing the socket
// cancels the request.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>

#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "api.hpp"
#include "exchange.hpp"

namespace lpx::http {

class WebSocketSession final : public Exchange, public std::enable_shared_from_this<WebSocketSession> {
 public:
  // `key`: the configured key the upgrade carried (nullptr: none configured); `client`: the
  // peer's "address:port", for the access log.
  WebSocketSession(boost::beast::tcp_stream stream, Api& api, const ApiKey* key, std::string client);
  // Completes the handshake of `upgrade` and serves messages until the client closes.
  // Answers the upgrade; `upgrade_access` is its access-log entry, written once the handshake
  // has ended (101, or 400 when it failed).
  void start(Request upgrade, std::shared_ptr<AccessEntry> upgrade_access);

  boost::asio::any_io_executor executor() override { return ws_.get_executor(); }
  void respond(int status, std::string body, const char* content_type) override;
  void respond_error(const ApiError& error) override;
  void begin_events() override {}
  void send_event(std::string payload) override;
  void end_events() override { end_message(); }
  void watch_disconnect(std::function<void()> on_gone) override { on_gone_ = std::move(on_gone); }
  std::shared_ptr<AccessEntry> access() override { return access_; }

 private:
  void read();
  void on_read(boost::beast::error_code ec);
  void send(std::string frame);
  void pump();
  void gone();
  void end_message();  // the message's answer is complete: the next one may come

  boost::beast::websocket::stream<boost::beast::tcp_stream> ws_;
  Api& api_;
  boost::beast::flat_buffer buffer_;
  std::deque<std::string> outbox_;
  bool writing_ = false;
  bool busy_ = false;  // a request is running
  bool closed_ = false;
  std::function<void()> on_gone_;
  const ApiKey* key_;
  std::string client_;
  std::shared_ptr<AccessEntry> access_;  // the message in progress
};

}  // namespace lpx::http
