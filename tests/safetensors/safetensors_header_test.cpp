// The safetensors header parser: what it reads from good headers, and a clean refusal naming the
// fault for each malformed one (tests/safetensors/malformed_safetensors_cases.cpp).
#include <gtest/gtest.h>

#include "safetensors/malformed_safetensors_cases.hpp"
#include "safetensors/safetensors_bytes.hpp"
#include "safetensors_header.hpp"

namespace lpx::test {
namespace {

using safetensors::Dtype;
using safetensors::parse_safetensors;

TEST(SafetensorsHeader, ReadsTensorsMetadataAndAbsoluteOffsets) {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},)"
      R"("w":{"dtype":"BF16","shape":[3,2],"data_offsets":[8,20]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
      R"("e":{"dtype":"F16","shape":[0,5],"data_offsets":[20,20]}})";
  const auto bytes = safetensors_bytes(header + "   ", 20);  // padded with spaces, as writers may
  auto parsed = parse_safetensors(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed) << parsed.error();
  ASSERT_EQ(parsed->tensors.size(), 3u);
  EXPECT_EQ(parsed->metadata.at("format"), "pt");
  const std::uint64_t data = 8 + header.size() + 3;
  const auto& w = parsed->tensors[0];
  EXPECT_EQ(w.name, "w");
  EXPECT_EQ(w.dtype, Dtype::bf16);
  EXPECT_EQ(w.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(w.begin, data + 8);
  EXPECT_EQ(w.end, data + 20);
  EXPECT_EQ(parsed->tensors[1].begin, data);
  EXPECT_EQ(parsed->tensors[2].end - parsed->tensors[2].begin, 0u);
}

TEST(SafetensorsHeader, AcceptsAFileWithNoTensors) {
  const auto bytes = safetensors_bytes("{}", 0);
  auto parsed = parse_safetensors(bytes.data(), bytes.size());
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_TRUE(parsed->tensors.empty());
}

TEST(SafetensorsHeader, NamesEveryDtypeItReads) {
  for (const char* name : {"BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64",
                           "I64", "U64", "F8_E4M3", "F8_E5M2"}) {
    const std::string header = std::string(R"({"t":{"dtype":")") + name + R"(","shape":[0],"data_offsets":[0,0]}})";
    const auto bytes = safetensors_bytes(header, 0);
    auto parsed = parse_safetensors(bytes.data(), bytes.size());
    ASSERT_TRUE(parsed) << name << ": " << parsed.error();
    EXPECT_STREQ(safetensors::dtype_name(parsed->tensors[0].dtype), name);
  }
}

TEST(SafetensorsHeader, RefusesEachMalformedFileWithItsReason) {
  for (const MalformedSafetensors& c : malformed_safetensors_cases()) {
    auto parsed = parse_safetensors(c.bytes.data(), c.bytes.size());
    ASSERT_FALSE(parsed) << c.name << " was accepted";
    EXPECT_NE(parsed.error().find(c.expected), std::string::npos)
        << c.name << ": '" << parsed.error() << "' does not say '" << c.expected << "'";
  }
}

TEST(SafetensorsHeader, EveryTruncationOfAGoodFileIsRefused) {
  const auto bytes = safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(parse_safetensors(bytes.data(), n)) << "accepted the first " << n << " bytes";
  }
}

}  // namespace
}  // namespace lpx::test
