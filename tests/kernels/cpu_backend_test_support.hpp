// Shared by the CPU backend plugin tests: one backend plugin instance loaded as the host loads
// it, with its options, and a weight view over test data.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"

namespace lpx::core::cpu_backend_test {

// One backend plugin instance with its options (defaults unless given).
class Backend {
 public:
  Backend(HostServices& services, const std::string& name,
          const std::map<std::string, OptionValue>& options = {}) {
    instance_ = test::create_builtin(services, name, options);
    api_ = &instance_->api<lpx_quant_backend_api>();
  }

  const lpx_quant_backend_api& api() const { return *api_; }
  lpx_instance* raw() const { return instance_->raw(); }

  // Runs an API call that must succeed.
  template <class Call>
  void ok(Call call) const {
    if (lpx_status* s = call(*api_, raw())) {
      const std::string message = s->message;
      s->release(s);
      FAIL() << message;
    }
  }

  std::vector<float> matmul(const lpx_tensor_view& w, const std::vector<float>& x,
                            std::size_t batch) const {
    std::vector<float> y(static_cast<std::size_t>(w.dims[1]) * batch, -1.0f);
    ok([&](const auto& api, lpx_instance* i) {
      return api.matmul(i, &w, x.data(), y.data(), batch);
    });
    return y;
  }

 private:
  std::shared_ptr<PluginInstance> instance_;
  const lpx_quant_backend_api* api_ = nullptr;
};

inline lpx_tensor_view view(std::int32_t type, std::size_t rows, std::size_t columns,
                            const std::vector<std::uint8_t>& data) {
  lpx_tensor_view w{};
  w.name = "w";
  w.type = type;
  w.n_dims = 2;
  w.dims[0] = static_cast<std::int64_t>(columns);
  w.dims[1] = static_cast<std::int64_t>(rows);
  w.data = data.data();
  w.size_bytes = data.size();
  return w;
}

// A fixture with the host services a plugin needs.
class BackendTest : public ::testing::Test {
 protected:
  MetricsRegistry metrics;
  HostServices services{metrics};
};

}  // namespace lpx::core::cpu_backend_test
