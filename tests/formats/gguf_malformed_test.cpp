// A GGUF file is untrusted input: every malformed file is refused with a message naming the
// field and values, and nothing crashes (the sanitizer build runs these too).
#include <gtest/gtest.h>

#include "formats/gguf_builder.hpp"
#include "formats/malformed_gguf_cases.hpp"
#include "gguf_parser.hpp"

namespace lpx::test {
namespace {

using Bytes = std::vector<std::uint8_t>;

class MalformedGgufFile : public ::testing::TestWithParam<MalformedGguf> {};

TEST_P(MalformedGgufFile, IsRefusedWithAClearMessage) {
  const Bytes bytes = GetParam().make();
  auto file = gguf::parse_gguf(bytes.data(), bytes.size());
  ASSERT_FALSE(file) << "accepted a malformed file";
  EXPECT_NE(file.error().find(GetParam().expected), std::string::npos)
      << "message: " << file.error() << "\nexpected to contain: " << GetParam().expected;
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedGgufFile, ::testing::ValuesIn(malformed_gguf_cases()),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(MalformedGgufCases, AreAtLeastThirty) { EXPECT_GE(malformed_gguf_cases().size(), 30u); }

TEST(MalformedGgufCases, TheBaseFileIsValid) {
  const Bytes bytes = malformed_gguf_base().build();
  auto file = gguf::parse_gguf(bytes.data(), bytes.size());
  ASSERT_TRUE(file) << file.error();
}

TEST(MalformedGgufCases, EveryTruncationOfAValidFileIsRefused) {
  // Cut a valid file at every length: the parser must never read past the cut.
  const Bytes full = malformed_gguf_base().u32("general.alignment", 64).layout_alignment(64).build();
  ASSERT_TRUE(gguf::parse_gguf(full.data(), full.size()));
  for (std::size_t size = 0; size < full.size(); ++size) {
    Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(size));
    cut.shrink_to_fit();
    auto file = gguf::parse_gguf(cut.data(), cut.size());
    EXPECT_FALSE(file) << "a file cut at " << size << " of " << full.size() << " bytes was accepted";
  }
}

}  // namespace
}  // namespace lpx::test
