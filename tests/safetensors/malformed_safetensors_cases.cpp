#include "safetensors/malformed_safetensors_cases.hpp"

#include <string>

#include "safetensors/safetensors_bytes.hpp"

namespace lpx::test {

std::vector<MalformedSafetensors> malformed_safetensors_cases() {
  const std::string ok = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  std::string deep(100, '[');
  deep += std::string(100, ']');
  std::vector<MalformedSafetensors> cases = {
      {"too-short", {1, 2, 3}, "too short"},
      {"header-over-the-limit", safetensors_bytes_declaring(ok, 100'000'001, 8), "larger than"},
      {"header-past-the-end", safetensors_bytes_declaring(ok, ok.size() + 100, 8), "runs past the end"},
      {"not-an-object", safetensors_bytes("[1,2]", 0), "does not start with a JSON object"},
      {"bad-json", safetensors_bytes(R"({"a":{"dtype":"F32",)", 0), "not valid JSON"},
      {"too-deep", safetensors_bytes(R"({"a":)" + deep + "}", 0), "not valid JSON"},
      {"entry-not-object", safetensors_bytes(R"({"a":[1]})", 0), "should be an object"},
      {"no-dtype", safetensors_bytes(R"({"a":{"shape":[2],"data_offsets":[0,8]}})", 8), "lacks dtype"},
      {"no-shape", safetensors_bytes(R"({"a":{"dtype":"F32","data_offsets":[0,8]}})", 8), "lacks shape"},
      {"no-offsets", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2]}})", 8), "lacks data_offsets"},
      {"unknown-dtype", safetensors_bytes(R"({"a":{"dtype":"F12","shape":[2],"data_offsets":[0,8]}})", 8),
       "unknown dtype 'F12'"},
      {"negative-dim", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
       "not a size"},
      {"float-dim", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8),
       "not a size"},
      {"huge-shape",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})", 8),
       "more bytes than a file can hold"},
      {"too-many-dims",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,4]}})", 4),
       "9 dimensions"},
      {"offsets-disagree-with-shape",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8), "do not hold the 12 bytes"},
      {"offsets-reversed", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", 8),
       "do not hold"},
      {"offsets-not-pair", safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8),
       "should be [begin, end]"},
      {"overlap",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12),
       "(overlap)"},
      {"gap",
       safetensors_bytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                         R"("b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})", 20),
       "(gap)"},
      {"offsets-past-the-end", safetensors_bytes(ok, 4), "file holds 4 after the header"},
      {"trailing-data", safetensors_bytes(ok, 16), "file holds 16 after the header"},
      {"metadata-not-strings", safetensors_bytes(R"({"__metadata__":{"format":1}})", 0), "should be a string"},
      {"empty-name", safetensors_bytes(R"({"":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8),
       "empty name"},
      {"long-name",
       safetensors_bytes(R"({")" + std::string(600, 'n') + R"(":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8),
       "longer than"},
  };
  return cases;
}

}  // namespace lpx::test
