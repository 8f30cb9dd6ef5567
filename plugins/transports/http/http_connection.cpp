#include "http_connection.hpp"

#include <sys/socket.h>

#include <cerrno>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/websocket.hpp>
#include <lpx/cpp/host.hpp>

#include "websocket_protocols.hpp"
#include "websocket_session.hpp"

namespace lpx::http {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;

HttpConnection::HttpConnection(net::ip::tcp::socket socket, Api& api, const HttpOptions& options)
    : stream_(std::move(socket)), idle_timer_(stream_.get_executor()), api_(api), options_(options) {
  beast::error_code ec;
  const auto peer = stream_.socket().remote_endpoint(ec);
  const std::string address = peer.address().is_v6() ? "[" + peer.address().to_string() + "]"
                                                     : peer.address().to_string();
  client_ = ec ? "-" : address + ":" + std::to_string(peer.port());
}

void HttpConnection::begin_access(const Request* request) {
  AccessRecord record;
  record.client = client_;
  record.endpoint = endpoint_;
  if (request != nullptr) {
    record.method = std::string(request->method_string());
    const auto id = request->find("X-Request-Id");
    record.request_id = http::request_id(id == request->end() ? std::string_view() : std::string_view(id->value()));
    key_ = api_.key_of(*request);
    if (key_ != nullptr) record.key_id = key_->id;
  } else {
    key_ = nullptr;
    record.method = "-";
    record.request_id = http::request_id({});
  }
  access_ = std::make_shared<AccessEntry>(options_.access_log, std::move(record));
}

void HttpConnection::set_status(int status) {
  if (access_) access_->record.status = status;
}

void HttpConnection::start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
}

void HttpConnection::wait_for_request() {
  if (closed_) return;
  if (buffer_.size() > 0) {  // the client already sent (part of) the next request
    read_header();
    return;
  }
  // Idle keep-alive: wait for the first byte under idle_timeout, then the header timeout applies.
  idle_timer_.expires_after(options_.idle_timeout);
  idle_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
    if (!ec) self->close();
  });
  stream_.socket().async_wait(net::ip::tcp::socket::wait_read,
                              [self = shared_from_this()](beast::error_code ec) {
                                self->idle_timer_.cancel();
                                if (ec || self->closed_) return self->close();
                                self->read_header();
                              });
}

void HttpConnection::read_header() {
  if (closed_) return;
  parser_.emplace();
  parser_->header_limit(options_.max_header_bytes);
  parser_->body_limit(options_.max_body_bytes);
  endpoint_ = "other";
  stream_.expires_after(options_.header_timeout);
  bhttp::async_read_header(stream_, buffer_, *parser_,
                           [self = shared_from_this()](beast::error_code ec, std::size_t) {
                             self->on_header(ec);
                           });
}

void HttpConnection::on_header(beast::error_code ec) {
  answered_ = false;
  keep_alive_ = false;
  cors_origin_.clear();
  if (ec == bhttp::error::header_limit) {
    begin_access(nullptr);
    respond_error(ApiError(431, "invalid_request_error", "the request headers are too large"));
    return;
  }
  if (ec == bhttp::error::body_limit) {  // Content-Length over the limit, seen with the headers
    begin_access(nullptr);
    respond_error(ApiError(413, "invalid_request_error", "the request body is too large"));
    return;
  }
  if (ec) {  // timeout (slow client), reset, garbage: nothing to answer
    if (ec == beast::error::timeout) log_debug("closing a connection whose request did not arrive in time");
    return close();
  }
  const Request& request = parser_->get();
  endpoint_ = Api::endpoint_label(std::string_view(request.target().data(), request.target().size()).substr(
      0, request.target().find('?')));
  if (auto origin = request.find(bhttp::field::origin); origin != request.end()) {
    cors_origin_ = api_.cors_origin(origin->value());
  }
  begin_access(&request);
  if (const auto length = parser_->content_length(); length && *length > options_.max_body_bytes) {
    respond_error(ApiError(413, "invalid_request_error", "the request body is too large"));
    return;
  }
  if (beast::websocket::is_upgrade(request) && endpoint_ == "/v1/ws") {
    if (!api_.authorized(request, key_)) {
      respond_error(ApiError(401, "authentication_error", "a valid API key is required"));
      return;
    }
    if (offers_key_without_lpx(offered_websocket_protocols(request))) {
      respond_error(bad_request("offer the subprotocol \"lpx\" with \"lpx-api-key.KEY\": it is "
                                "the one the server selects (the key is never echoed)"));
      return;
    }
    stream_.expires_never();
    std::make_shared<WebSocketSession>(std::move(stream_), api_, key_, client_)
        ->start(parser_->release(), std::move(access_));
    closed_ = true;  // the socket belongs to the session now
    return;
  }
  auto read_body = [self = shared_from_this()] {
    self->stream_.expires_after(self->options_.header_timeout);
    bhttp::async_read(self->stream_, self->buffer_, *self->parser_,
                      [self](beast::error_code e, std::size_t) { self->on_body(e); });
  };
  if (auto expect = request.find(bhttp::field::expect);
      expect != request.end() && beast::iequals(expect->value(), "100-continue")) {
    auto interim = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
    bhttp::async_write(stream_, *interim, [self = shared_from_this(), interim, read_body](beast::error_code e, std::size_t) {
      if (e) return self->close();
      read_body();
    });
    return;
  }
  read_body();
}

void HttpConnection::on_body(beast::error_code ec) {
  if (ec == bhttp::error::body_limit) {
    respond_error(ApiError(413, "invalid_request_error", "the request body is too large"));
    return;
  }
  if (ec) return close();
  dispatch();
}

void HttpConnection::dispatch() {
  stream_.expires_never();
  const Request& request = parser_->get();
  keep_alive_ = request.keep_alive();
  head_only_ = request.method() == bhttp::verb::head;
  if (request.method() == bhttp::verb::options) {  // CORS preflight
    bhttp::response<bhttp::string_body> response{bhttp::status::no_content, 11};
    if (!cors_origin_.empty()) {
      response.set(bhttp::field::access_control_allow_methods, "GET, POST, OPTIONS");
      response.set(bhttp::field::access_control_allow_headers,
                   "Authorization, Content-Type, X-Request-Id");
      response.set(bhttp::field::access_control_max_age, "600");
    }
    answered_ = true;
    api_.metrics().count_request(endpoint_, 204);
    set_status(204);
    write(std::move(response), !keep_alive_);
    return;
  }
  api_.handle(request, shared_from_this(), key_);
}

void HttpConnection::add_common_headers(bhttp::fields& fields) const {
  fields.set(bhttp::field::server, "lpx");
  if (access_) fields.set("X-Request-Id", access_->record.request_id);
  if (!cors_origin_.empty()) {
    fields.set(bhttp::field::access_control_allow_origin, cors_origin_);
    fields.set(bhttp::field::access_control_expose_headers, "X-Request-Id, Retry-After, retry-after-ms");
    if (cors_origin_ != "*") fields.set(bhttp::field::vary, "Origin");
  }
}

void HttpConnection::respond(int status, std::string body, const char* content_type) {
  if (answered_ || closed_) return;
  answered_ = true;
  watching_ = false;
  api_.metrics().count_request(endpoint_, status);
  set_status(status);
  bhttp::response<bhttp::string_body> response{static_cast<bhttp::status>(status), 11};
  response.set(bhttp::field::content_type, content_type);
  response.body() = std::move(body);
  write(std::move(response), !keep_alive_);
}

void HttpConnection::respond_error(const ApiError& error) {
  if (answered_ || closed_) return;
  answered_ = true;
  watching_ = false;
  api_.metrics().count_request(endpoint_, error.status());
  set_status(error.status());
  bhttp::response<bhttp::string_body> response{static_cast<bhttp::status>(error.status()), 11};
  response.set(bhttp::field::content_type, "application/json");
  if (error.retry_after() > 0) response.set(bhttp::field::retry_after, std::to_string(error.retry_after()));
  // Milliseconds too, which OpenAI's clients prefer to the whole seconds of Retry-After.
  if (error.retry_after_ms() > 0) response.set("retry-after-ms", std::to_string(error.retry_after_ms()));
  if (error.status() == 401) response.set(bhttp::field::www_authenticate, "Bearer");
  response.body() = error.body();
  // After a framing error (431, 413) the rest of the request is unread: close.
  const bool framing = error.status() == 413 || error.status() == 431;
  write(std::move(response), framing || !keep_alive_);
}

void HttpConnection::write(bhttp::response<bhttp::string_body> response, bool close_after) {
  response.keep_alive(!close_after);
  add_common_headers(response.base());
  response.prepare_payload();
  if (head_only_) response.body().clear();  // Content-Length stays that of the GET
  auto held = std::make_shared<bhttp::response<bhttp::string_body>>(std::move(response));
  bhttp::async_write(stream_, *held, [self = shared_from_this(), held, close_after](beast::error_code ec, std::size_t) {
    if (ec) return self->close();
    self->finish_exchange(close_after);
  });
}

void HttpConnection::begin_events() {
  if (answered_ || closed_) return;
  answered_ = true;
  api_.metrics().count_request(endpoint_, 200);
  set_status(200);
  event_header_.emplace(bhttp::status::ok, 11);
  event_header_->set(bhttp::field::content_type, "text/event-stream");
  event_header_->set(bhttp::field::cache_control, "no-cache");
  event_header_->set("X-Accel-Buffering", "no");  // proxies must not hold events back
  add_common_headers(event_header_->base());
  event_header_->keep_alive(keep_alive_);
  event_header_->chunked(true);
  event_serializer_.emplace(*event_header_);
  outbox_.push_back({Outgoing::kHeader, {}});
  pump();
}

void HttpConnection::send_event(std::string payload) {
  if (closed_ || !event_serializer_) return;
  outbox_.push_back({Outgoing::kChunk, "data: " + payload + "\n\n"});
  pump();
}

void HttpConnection::end_events() {
  if (closed_ || !event_serializer_) return;
  outbox_.push_back({Outgoing::kLast, {}});
  pump();
}

void HttpConnection::pump() {
  if (writing_ || outbox_.empty() || closed_) return;
  writing_ = true;
  auto done = [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->client_gone();
    const bool last = self->outbox_.front().kind == Outgoing::kLast;
    self->outbox_.pop_front();
    if (last) {
      self->watching_ = false;
      self->event_serializer_.reset();
      self->event_header_.reset();
      self->finish_exchange(!self->keep_alive_);
    } else {
      self->pump();
    }
  };
  Outgoing& next = outbox_.front();
  switch (next.kind) {
    case Outgoing::kHeader:
      bhttp::async_write_header(stream_, *event_serializer_, std::move(done));
      break;
    case Outgoing::kChunk:
      net::async_write(stream_, bhttp::make_chunk(net::buffer(next.data)), std::move(done));
      break;
    case Outgoing::kLast:
      net::async_write(stream_, bhttp::make_chunk_last(), std::move(done));
      break;
  }
}

void HttpConnection::finish_exchange(bool close_after) {
  on_gone_ = nullptr;
  access_.reset();
  if (close_after) return close();
  wait_for_request();
}

void HttpConnection::watch_disconnect(std::function<void()> on_gone) {
  if (closed_) {
    on_gone();
    return;
  }
  on_gone_ = std::move(on_gone);
  watching_ = true;
  stream_.socket().async_wait(net::ip::tcp::socket::wait_read,
                              [self = shared_from_this()](beast::error_code ec) { self->on_readable(ec); });
}

void HttpConnection::on_readable(beast::error_code ec) {
  if (ec || !watching_ || closed_) return;
  // Readable while we are answering: either the client closed (EOF), or it sent more (a
  // pipelined request), which we leave for the next read.
  char byte = 0;
  const ssize_t n = ::recv(stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    client_gone();
  } else if (n < 0) {
    watch_disconnect(std::move(on_gone_));  // spurious wake-up: watch again
  } else {
    watching_ = false;
  }
}

void HttpConnection::client_gone() {
  if (closed_) return;
  if (on_gone_) {
    auto on_gone = std::move(on_gone_);
    on_gone_ = nullptr;
    on_gone();
  }
  close();
}

void HttpConnection::close() {
  if (closed_) return;
  closed_ = true;
  watching_ = false;
  access_.reset();
  idle_timer_.cancel();
  beast::error_code ec;  // a write in flight still owns its outbox_ buffer: it ends with an error
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
}

}  // namespace lpx::http
