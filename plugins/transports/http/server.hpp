// The HTTP server: binds, accepts connections on a pool of network threads, and on stop drains:
// new requests are refused (/ready says 503), in-flight generations get drain_timeout to finish,
// then are cancelled; run() returns once the engine holds none of our requests.
#pragma once

#include <condition_variable>
#include <mutex>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <lpx/kinds/transport.h>

#include "api.hpp"
#include "http_options.hpp"

namespace lpx::http {

class Server {
 public:
  // Serves the models of `context`, which must outlive the server.
  Server(const lpx_run_context& context, const HttpOptions& options);

  // Serves until stop(). Throws lpx::Error when it cannot listen, or when the configuration
  // would expose the API without a key.
  void run();
  // Any thread, any time (before run too); returns at once.
  void stop() noexcept;

 private:
  boost::asio::ip::tcp::endpoint resolve();
  void accept();
  void drain();

  const HttpOptions& options_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  Api api_;
  std::mutex mutex_;
  std::condition_variable stop_requested_;
  bool stopping_ = false;
};

}  // namespace lpx::http
