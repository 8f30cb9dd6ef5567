// The host table as plugins see it: options, metrics, memory, statuses, logging.
#include "plugin_host/host_services.hpp"

#include <gtest/gtest.h>

#include "lpx/version.h"
#include "pipeline/resolved_options.hpp"

namespace lpx::core {
namespace {

class HostApiTest : public ::testing::Test {
 protected:
  HostApiTest() {
    options.specs = {
        {"name", LPX_OPTION_STRING, false, std::nullopt, "", {}, {}},
        {"k", LPX_OPTION_INT, false, std::nullopt, "", {}, {}},
        {"stops", LPX_OPTION_STRING_LIST, false, std::nullopt, "", {}, {}},
        {"unset", LPX_OPTION_FLOAT, false, std::nullopt, "", {}, {}},
    };
    options.values["name"] = std::string("abc");
    options.values["k"] = std::int64_t{40};
    options.values["stops"] = std::vector<std::string>{"x", "yz"};
  }
  MetricsRegistry metrics;
  HostServices services{metrics};
  std::unique_ptr<PluginHostApi> api = services.make_api("demo");
  const lpx_host_api& host = api->table;
  ResolvedOptions options;
};

std::string message_of(lpx_status* status) {
  EXPECT_NE(status, nullptr);
  std::string text = lpx_status_message(status);
  lpx_status_release(status);
  return text;
}

TEST_F(HostApiTest, DescribesItself) {
  EXPECT_EQ(host.struct_size, sizeof(lpx_host_api));
  EXPECT_EQ(host.abi_major, static_cast<unsigned>(LPX_ABI_MAJOR));
  EXPECT_EQ(host.abi_minor, static_cast<unsigned>(LPX_ABI_MINOR));
}

TEST_F(HostApiTest, ReadsOptionsOfEachType) {
  const char* text = nullptr;
  size_t length = 0;
  ASSERT_EQ(host.option_string(&options, "name", &text, &length), nullptr);
  EXPECT_EQ(std::string(text, length), "abc");
  int64_t k = 0;
  ASSERT_EQ(host.option_int(&options, "k", &k), nullptr);
  EXPECT_EQ(k, 40);
  size_t size = 0;
  ASSERT_EQ(host.option_list_size(&options, "stops", &size), nullptr);
  EXPECT_EQ(size, 2u);
  ASSERT_EQ(host.option_list_string(&options, "stops", 1, &text, &length), nullptr);
  EXPECT_EQ(std::string(text, length), "yz");
  EXPECT_EQ(host.option_is_set(&options, "k"), 1);
  EXPECT_EQ(host.option_is_set(&options, "unset"), 0);
}

TEST_F(HostApiTest, FailedReadsSayWhyAndLeaveOutputsUntouched) {
  int64_t k = 7;
  EXPECT_EQ(message_of(host.option_int(&options, "name", &k)),
            "option 'name' was read as a type other than the one declared");
  EXPECT_EQ(message_of(host.option_int(&options, "nope", &k)),
            "option 'nope' is not declared by the plugin");
  double f = 1.5;
  EXPECT_EQ(message_of(host.option_float(&options, "unset", &f)),
            "option 'unset' is not set and has no default");
  const char* text = "keep";
  size_t length = 4;
  EXPECT_EQ(message_of(host.option_list_string(&options, "stops", 2, &text, &length)),
            "option 'stops' has no item 2");
  EXPECT_EQ(k, 7);
  EXPECT_EQ(f, 1.5);
  EXPECT_STREQ(text, "keep");
  size_t size = 99;
  EXPECT_EQ(message_of(host.option_list_size(&options, "k", &size)),
            "option 'k' was read as a type other than the one declared");
  EXPECT_EQ(size, 99u);
}

TEST_F(HostApiTest, RecordsMetricsUnderTheLpxPrefix) {
  lpx_metric_id id = 0;
  ASSERT_EQ(host.metric_register(host.context, LPX_METRIC_COUNTER, "demo_events", "Events",
                                 nullptr, 0, &id),
            nullptr);
  host.metric_record(host.context, id, 3);
  EXPECT_NE(metrics.render().find("lpx_demo_events 3\n"), std::string::npos);
  EXPECT_NE(message_of(host.metric_register(host.context, LPX_METRIC_GAUGE, "Bad Name", "",
                                            nullptr, 0, &id)),
            "");
}

TEST_F(HostApiTest, AllocatesAlignedAndAccountedMemory) {
  void* p = host.alloc(host.context, 1000, 64);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_GE(services.plugin_bytes(), 1000u);
  host.free(host.context, p);
  EXPECT_EQ(services.plugin_bytes(), 0u);
  EXPECT_EQ(host.alloc(host.context, 16, 3), nullptr) << "alignment must be a power of two";
}

TEST_F(HostApiTest, MakesStatusesThatCopyTheirMessage) {
  std::string message = "disk full";
  lpx_status* status = host.status_create(LPX_ERR_IO, message.c_str());
  message = "changed";
  EXPECT_EQ(status->code, LPX_ERR_IO);
  EXPECT_STREQ(status->message, "disk full");
  status->release(status);
}

}  // namespace
}  // namespace lpx::core
