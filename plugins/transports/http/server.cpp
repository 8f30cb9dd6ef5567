#include "server.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <lpx/cpp/host.hpp>
#include <lpx/cpp/status.hpp>

#include "http_connection.hpp"

namespace lpx::http {

namespace net = boost::asio;
using tcp = net::ip::tcp;

Server::Server(const lpx_run_context& context, const HttpOptions& options)
    : options_(options), acceptor_(io_), api_(context, options) {}

tcp::endpoint Server::resolve() {
  boost::system::error_code ec;
  const net::ip::address address = net::ip::make_address(options_.host, ec);
  if (!ec) return {address, options_.port};
  tcp::resolver resolver(io_.get_executor());
  auto results = resolver.resolve(options_.host, std::to_string(options_.port), ec);
  if (ec || results.empty()) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "host '" + options_.host + "' cannot be resolved: " + ec.message());
  }
  return results.begin()->endpoint();
}

void Server::run() {
  const tcp::endpoint endpoint = resolve();
  if (!endpoint.address().is_loopback() && options_.api_keys.empty() && !options_.allow_public_without_key) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "refusing to serve on " + options_.host +
                    " without an API key: anyone who can reach it could use the model. Set "
                    "api_key / api_key_file (--api-key, --api-key-file), bind 127.0.0.1, or set "
                    "allow_public_without_key = true if the network is trusted");
  }
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error(LPX_ERR_IO, "cannot listen on " + options_.host + ":" +
                                         std::to_string(options_.port) + ": " + ec.message());
  }
  const tcp::endpoint bound = acceptor_.local_endpoint();
  const std::string shown = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                                    : bound.address().to_string();
  log_info("listening on http://" + shown + ":" + std::to_string(bound.port()) +
           (options_.api_keys.empty() ? " (no API key)" : " (API key required)"));

  accept();
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < options_.io_threads; ++i) threads.emplace_back([this] { io_.run(); });
  {
    std::unique_lock lock(mutex_);
    stop_requested_.wait(lock, [&] { return stopping_; });
  }
  drain();
  io_.stop();
  for (std::thread& t : threads) t.join();
}

void Server::stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  stop_requested_.notify_all();
}

void Server::accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (!ec) {
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);  // small event chunks must not wait
      std::make_shared<HttpConnection>(std::move(socket), api_, options_)->start();
    }
    accept();
  });
}

void Server::drain() {
  using Clock = std::chrono::steady_clock;
  api_.start_draining();
  net::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
  const std::size_t in_flight = api_.in_flight();
  log_info("stopping: " + std::to_string(in_flight) + " request(s) in flight, up to " +
           std::to_string(options_.drain_timeout.count()) + " s to finish");
  const auto wait_until_idle = [&](Clock::time_point deadline) {
    while (api_.in_flight() > 0 && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return api_.in_flight() == 0;
  };
  const bool idle = wait_until_idle(Clock::now() + options_.drain_timeout);
  // A request still waiting for its model to load gets its 503 now, while the network threads
  // run; a load that ends later finds nothing to answer.
  api_.stop_routing();
  if (!idle) {
    log_warn("drain timeout: cancelling " + std::to_string(api_.active().count()) + " request(s)");
    api_.active().cancel_all();
    wait_until_idle(Clock::now() + std::chrono::seconds(10));  // they end at the next engine step
  }
  // Let the last answers reach their sockets.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

}  // namespace lpx::http
