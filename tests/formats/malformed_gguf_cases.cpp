#include "formats/malformed_gguf_cases.hpp"

#include <algorithm>
#include <string>

#include "formats/gguf_builder.hpp"

namespace lpx::test {
namespace {

using Bytes = std::vector<std::uint8_t>;

// A small valid file the cases start from.
GgufBuilder valid() {
  GgufBuilder b;
  b.string("general.architecture", "llama").u32("llama.block_count", 1);
  b.tensor("token_embd.weight", kGgmlF32, {8, 4});
  b.tensor("output.weight", kGgmlQ8_0, {32, 2});
  return b;
}

Bytes truncate(Bytes bytes, std::size_t size) {
  bytes.resize(size);
  return bytes;
}

Bytes nested_array(int depth) {
  Bytes value;
  for (int d = 0; d < depth; ++d) {
    Bytes outer = le32(kArray);
    auto count = le64(1);
    outer.insert(outer.end(), count.begin(), count.end());
    value.insert(value.begin(), outer.begin(), outer.end());
  }
  Bytes leaf = le32(kU8);
  auto zero = le64(0);
  leaf.insert(leaf.end(), zero.begin(), zero.end());
  value.insert(value.end(), leaf.begin(), leaf.end());
  return value;
}

Bytes concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

const std::vector<MalformedGguf> kCases = {
    {"EmptyFile", [] { return Bytes{}; }, "not a GGUF file (bad magic)"},
    {"BadMagic", [] { return valid().magic("GGUG").build(); }, "not a GGUF file (bad magic)"},
    {"VersionOne", [] { return valid().version(1).build(); }, "GGUF version 1 is not supported"},
    {"VersionFour", [] { return valid().version(4).build(); }, "unsupported GGUF version 4"},
    {"BigEndian", [] { return valid().version(0x03000000).build(); }, "(a big-endian file?)"},
    {"TruncatedHeader", [] { return truncate(valid().build(), 12); }, "header: file ends"},
    {"HugeTensorCount", [] { return valid().tensor_count_override(1ull << 62).build(); },
     "tensor count 4611686018427387904 is impossible"},
    {"HugeMetadataCount", [] { return valid().metadata_count_override(~0ull).build(); },
     "metadata count 18446744073709551615 is impossible"},
    {"MetadataCountPastEnd", [] { return valid().metadata_count_override(40).build(); },
     "metadata count 40 is impossible"},
    {"KeyTooLong", [] { return valid().u32(std::string(2000, 'k'), 1).build(); },
     "key: string of 2000 bytes exceeds the limit of 1024"},
    {"KeyPastEnd",
     [] { return concat({GgufBuilder().metadata_count_override(1).build(), le64(500), Bytes(10, 'a')}); },
     "key: string of 500 bytes at offset"},
    {"EmptyKey", [] { return valid().u32("", 1).build(); }, "metadata entry 2: empty key"},
    {"KeyWithNul", [] { return valid().u32(std::string("a\0b", 3), 1).build(); }, "key contains NUL"},
    {"DuplicateKey", [] { return valid().u32("llama.block_count", 2).build(); },
     "duplicate metadata key 'llama.block_count'"},
    {"UnknownValueType", [] { return valid().raw("x", 13, le32(0)).build(); },
     "metadata 'x': unknown value type 13"},
    {"BoolNotZeroOrOne", [] { return valid().raw("flag", kBool, {2}).build(); },
     "metadata 'flag': boolean byte is 2, not 0 or 1"},
    {"StringPastEnd", [] { return valid().raw("s", kString, le64(1ull << 40)).build(); },
     "metadata 's': string of 1099511627776 bytes exceeds the limit"},
    {"StringShort", [] { return concat({GgufBuilder().raw("s", kString, le64(100)).build(), Bytes(5, 'x')}); },
     "metadata 's': string of 100 bytes at offset"},
    {"ArrayCountPastEnd",
     [] { return valid().raw("a", kArray, concat({le32(kU32), le64(1000000)})).build(); },
     "metadata 'a': array of 1000000 uint32 elements at offset"},
    {"ArrayCountOverLimit",
     [] { return valid().raw("a", kArray, concat({le32(kU8), le64(1ull << 40)})).build(); },
     "array of 1099511627776 elements exceeds the limit"},
    {"ArrayOfUnknownType", [] { return valid().raw("a", kArray, concat({le32(77), le64(1)})).build(); },
     "metadata 'a': array of unknown value type 77"},
    {"ArraysNestedTooDeep", [] { return valid().raw("a", kArray, nested_array(5)).build(); },
     "arrays nested deeper than 3"},
    {"BoolArrayElement", [] { return valid().raw("a", kArray, concat({le32(kBool), le64(3), {0, 1, 5}})).build(); },
     "metadata 'a': boolean element 2 is 5, not 0 or 1"},
    {"StringArrayElementPastEnd",
     [] { return concat({GgufBuilder().raw("t", kArray, concat({le32(kString), le64(2), gguf_string("ok"), le64(99)})).build(), Bytes(3, 'z')}); },
     "metadata 't' element 1: string of 99 bytes at offset"},
    {"AlignmentWrongType", [] { return valid().string("general.alignment", "32").build(); },
     "general.alignment must be a uint32, found a string"},
    {"AlignmentZero", [] { return valid().u32("general.alignment", 0).build(); },
     "general.alignment 0 is not a power of two"},
    {"AlignmentNotPowerOfTwo", [] { return valid().u32("general.alignment", 48).build(); },
     "general.alignment 48 is not a power of two"},
    {"EmptyTensorName", [] { return valid().tensor("", kGgmlF32, {4}).build(); }, "tensor 2: empty name"},
    {"TensorNameTooLong", [] { return valid().tensor(std::string(300, 'n'), kGgmlF32, {4}).build(); },
     "tensor 2 name: string of 300 bytes exceeds the limit of 256"},
    {"DuplicateTensorName", [] { return valid().tensor("output.weight", kGgmlF32, {4}).build(); },
     "duplicate tensor name 'output.weight'"},
    {"ZeroDimensions", [] { return valid().tensor("t", kGgmlF32, {}).build(); },
     "tensor 't': 0 dimensions (1 to 4 allowed)"},
    {"FiveDimensions", [] { return valid().tensor("t", kGgmlF32, {1, 1, 1, 1, 1}).build(); },
     "tensor 't': 5 dimensions (1 to 4 allowed)"},
    {"ZeroDimension", [] { return valid().tensor("t", kGgmlF32, {4, 0}).build(); },
     "tensor 't': dimension 1 is 0"},
    {"ElementCountOverflows",
     [] { return valid().tensor({"t", kGgmlF32, {1ull << 40, 1ull << 40}, std::nullopt, 4}).build(); },
     "tensor 't': dimension 1 is 1099511627776 (zero, or the element count overflows)"},
    {"UnknownTensorType", [] { return valid().tensor({"t", 99, {32}, std::nullopt, 32}).build(); },
     "tensor 't': tensor type unknown (99) is not supported by LPX"},
    {"UnsupportedTensorType", [] { return valid().tensor({"t", kGgmlQ2_K, {256}, std::nullopt, 84}).build(); },
     "tensor 't': tensor type Q2_K (10) is not supported by LPX"},
    {"RowNotWholeBlocks", [] { return valid().tensor({"t", kGgmlQ4_0, {33, 2}, std::nullopt, 64}).build(); },
     "tensor 't': "},
    {"MisalignedOffset", [] { return valid().tensor({"t", kGgmlF32, {4}, 1000001, 16}).build(); },
     "tensor 't': data offset 1000001 is not a multiple of the alignment 32"},
    {"OffsetPastEnd", [] { return valid().tensor({"t", kGgmlF32, {4}, 1ull << 40, 16}).build(); },
     "tensor 't': data [1099511627776, 1099511627776+16) runs past the end of the data section"},
    {"DataTruncated", [] { Bytes b = valid().build(); return truncate(b, b.size() - 10); },
     "tensor 'output.weight': data"},
    {"OverlappingTensors", [] { return valid().tensor({"t", kGgmlF32, {8}, 32, 32}).build(); },
     "overlaps tensor"},
    {"TruncatedTensorInfo", [] {
       const Bytes b = valid().build();
       const std::string name = "token_embd.weight";
       auto at = std::search(b.begin(), b.end(), name.begin(), name.end()) - b.begin();
       return truncate(b, static_cast<std::size_t>(at) + name.size() + 6);  // inside its dims
     },
     "tensor 'token_embd.weight': file ends"},
};

}  // namespace

const std::vector<MalformedGguf>& malformed_gguf_cases() { return kCases; }

GgufBuilder malformed_gguf_base() { return valid(); }

}  // namespace lpx::test
