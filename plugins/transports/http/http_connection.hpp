// One client connection speaking HTTP/1.1: reads requests with Beast under the configured limits
// and timeouts, hands each to the Api, and writes its answer: a whole response, or server-sent
// events with chunked encoding. Keep-alive; an Upgrade to /v1/ws becomes a WebSocketSession.
//
// All of its work runs on the connection's strand (executor()); Api and Generation post to it.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api.hpp"
#include "exchange.hpp"
#include "http_options.hpp"

namespace lpx::http {

class HttpConnection final : public Exchange, public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(boost::asio::ip::tcp::socket socket, Api& api, const HttpOptions& options);
  void start();

  boost::asio::any_io_executor executor() override { return stream_.get_executor(); }
  void respond(int status, std::string body, const char* content_type) override;
  void respond_error(const ApiError& error) override;
  void begin_events() override;
  void send_event(std::string payload) override;
  void end_events() override;
  void watch_disconnect(std::function<void()> on_gone) override;
  std::shared_ptr<AccessEntry> access() override { return access_; }

 private:
  // Starts the access-log entry of the request whose header arrived (nullptr: none parsed).
  void begin_access(const Request* request);
  void set_status(int status);
  void wait_for_request();
  void read_header();
  void on_header(boost::beast::error_code ec);
  void on_body(boost::beast::error_code ec);
  void dispatch();
  // Writes `response`; then closes, or reads the next request.
  void write(boost::beast::http::response<boost::beast::http::string_body> response, bool close);
  void add_common_headers(boost::beast::http::fields& fields) const;
  void pump();  // writes the next queued event chunk
  void finish_exchange(bool close);
  void on_readable(boost::beast::error_code ec);
  void client_gone();
  void close();

  boost::beast::tcp_stream stream_;
  boost::asio::steady_timer idle_timer_;  // keep-alive: how long to wait for the next request
  boost::beast::flat_buffer buffer_;
  Api& api_;
  const HttpOptions& options_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;

  // The exchange in progress.
  bool keep_alive_ = false;
  bool answered_ = false;
  std::string cors_origin_;
  std::string endpoint_;
  bool head_only_ = false;

  // Events (SSE): chunks queued for writing, one write in flight.
  struct Outgoing {
    enum Kind { kHeader, kChunk, kLast } kind;
    std::string data;
  };
  std::deque<Outgoing> outbox_;
  bool writing_ = false;
  std::optional<boost::beast::http::response<boost::beast::http::empty_body>> event_header_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>> event_serializer_;

  std::function<void()> on_gone_;
  bool watching_ = false;
  bool closed_ = false;

  std::string client_;                   // "address:port" of the peer
  const ApiKey* key_ = nullptr;          // the key the request in progress carries (Api::key_of)
  std::shared_ptr<AccessEntry> access_;  // the exchange in progress; released when it ends
};

}  // namespace lpx::http
