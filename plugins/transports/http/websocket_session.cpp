#include "websocket_session.hpp"

#include <boost/asio/dispatch.hpp>

#include "websocket_protocols.hpp"

namespace lpx::http {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;

WebSocketSession::WebSocketSession(beast::tcp_stream stream, Api& api, const ApiKey* key,
                                   std::string client)
    : ws_(std::move(stream)), api_(api), key_(key), client_(std::move(client)) {}

void WebSocketSession::start(Request upgrade, std::shared_ptr<AccessEntry> upgrade_access) {
  ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
  // Select "lpx" when the client offers subprotocols that include it (a browser that offers
  // some fails the handshake unless one is selected); never echo an "lpx-api-key." one.
  const bool select_lpx =
      any_websocket_protocol(offered_websocket_protocols(upgrade),
                             [](std::string_view token) { return token == kWebSocketProtocol; });
  ws_.set_option(
      websocket::stream_base::decorator([select_lpx](websocket::response_type& response) {
        response.set(beast::http::field::server, "lpx");
        if (select_lpx) {
          response.set(beast::http::field::sec_websocket_protocol, kWebSocketProtocol);
        }
      }));
  ws_.read_message_max(1 << 20);
  auto held = std::make_shared<Request>(std::move(upgrade));
  boost::asio::dispatch(ws_.get_executor(), [self = shared_from_this(), held, access = std::move(upgrade_access)] {
    self->ws_.async_accept(*held, [self, held, access](beast::error_code ec) mutable {
      const int status = ec ? 400 : 101;
      self->api_.metrics().count_request("/v1/ws", status);
      if (access) access->record.status = status;
      access.reset();  // the upgrade's line; each message then gets its own
      if (ec) return self->gone();
      self->read();
    });
  });
}

void WebSocketSession::read() {
  ws_.async_read(buffer_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void WebSocketSession::on_read(beast::error_code ec) {
  if (ec) return gone();  // closed or broken: cancel what runs
  std::string message = beast::buffers_to_string(buffer_.data());
  buffer_.consume(buffer_.size());
  if (busy_) {
    send(ApiError(429, "rate_limit_error", "one request at a time per WebSocket: wait for [DONE]").body());
  } else if (!ws_.got_text()) {
    send(ApiError(400, "invalid_request_error", "send requests as text frames").body());
  } else {
    busy_ = true;
    AccessRecord record;
    record.request_id = request_id({});
    record.client = client_;
    record.method = "WS";
    record.endpoint = "/v1/ws";
    record.key_id = key_ != nullptr ? key_->id : std::string();
    access_ = std::make_shared<AccessEntry>(api_.options().access_log, std::move(record));
    api_.handle_websocket_message(message, shared_from_this(), key_);
  }
  read();  // keep reading: that is how a close is noticed while a request runs
}

void WebSocketSession::respond(int status, std::string body, const char*) {
  if (access_) access_->record.status = status;
  send(std::move(body));
  end_message();
}

void WebSocketSession::respond_error(const ApiError& error) {
  if (access_) access_->record.status = error.status();
  send(error.body());
  end_message();
}

void WebSocketSession::end_message() {
  busy_ = false;
  access_.reset();
}

void WebSocketSession::send_event(std::string payload) {
  if (access_ && access_->record.status == 0) access_->record.status = 200;
  send(std::move(payload));
}

void WebSocketSession::send(std::string frame) {
  if (closed_) return;
  outbox_.push_back(std::move(frame));
  pump();
}

void WebSocketSession::pump() {
  if (writing_ || outbox_.empty() || closed_) return;
  writing_ = true;
  ws_.text(true);
  ws_.async_write(boost::asio::buffer(outbox_.front()), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->gone();
    self->outbox_.pop_front();
    self->pump();
  });
}

void WebSocketSession::gone() {
  if (closed_) return;
  closed_ = true;
  access_.reset();
  if (on_gone_) {
    auto on_gone = std::move(on_gone_);
    on_gone_ = nullptr;
    on_gone();
  }
}

}  // namespace lpx::http
