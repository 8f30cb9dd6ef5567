#include "model/model_validation.hpp"

#include <unordered_set>

#include "model/architecture.hpp"
#include "util/did_you_mean.hpp"

namespace lpx::core {
namespace {

std::string shape_text(const std::int64_t* dims, std::size_t n) {
  std::string out = "[";
  for (std::size_t d = 0; d < n; ++d) out += (d ? ", " : "") + std::to_string(dims[d]);
  return out + "]";
}

bool is_block_quantized(std::int32_t type) {
  return type != LPX_TENSOR_F32 && type != LPX_TENSOR_F16 && type != LPX_TENSOR_BF16;
}

Expected<bool> check_tensor(const lpx_tensor_view& view, const ExpectedTensor& expected) {
  const std::string name = "tensor '" + expected.name + "'";
  bool same = view.n_dims == expected.dims.size();
  for (std::size_t d = 0; same && d < expected.dims.size(); ++d) {
    same = view.dims[d] == expected.dims[d];
  }
  if (!same) {
    return invalid_argument(name + " has shape " + shape_text(view.dims, view.n_dims) +
                      ", the hyperparameters imply " +
                      shape_text(expected.dims.data(), expected.dims.size()));
  }
  if (expected.dims.size() == 1 && is_block_quantized(view.type)) {
    return invalid_argument(name + " is a vector and must be f32, f16 or bf16");
  }
  return true;
}

}  // namespace

Expected<Hyperparameters> validate_model(const ModelFile& file) {
  // An architecture this build does not know is unsupported, whatever its metadata holds.
  auto name = file.get_string("general.architecture");
  if (!name) return unexpected(name.error());
  const Architecture* architecture = find_architecture(*name);
  if (architecture == nullptr) {
    return unsupported("architecture '" + *name + "' is not supported" +
                       did_you_mean(*name, architecture_names()) +
                       " (supported: " + join_or_none(architecture_names()) + ")");
  }
  auto read = read_hyperparameters(file);
  if (!read) return unexpected(read.error());
  Hyperparameters h = *read;

  const lpx_tensor_view* embedding = file.find_tensor("token_embd.weight");
  if (embedding == nullptr) return invalid_argument(std::string("missing tensor 'token_embd.weight'"));
  if (embedding->n_dims != 2 || embedding->dims[1] <= 0 || embedding->dims[1] > (1 << 24)) {
    return invalid_argument("tensor 'token_embd.weight' has shape " +
                      shape_text(embedding->dims, embedding->n_dims) +
                      ", expected [embedding_length, vocabulary size]");
  }
  h.n_vocab = static_cast<std::uint32_t>(embedding->dims[1]);
  const std::string p = h.architecture + ".";
  if (file.has(p + "vocab_size")) {
    auto declared = file.get_uint(p + "vocab_size");
    if (!declared) return unexpected(declared.error());
    if (*declared != h.n_vocab) {
      return invalid_argument(p + "vocab_size " + std::to_string(*declared) +
                        " disagrees with the " + std::to_string(h.n_vocab) +
                        " rows of tensor 'token_embd.weight'");
    }
  }
  if (auto tokens = file.get_array("tokenizer.ggml.tokens"); tokens && tokens->length != h.n_vocab) {
    return invalid_argument("the tokenizer has " + std::to_string(tokens->length) +
                      " tokens but tensor 'token_embd.weight' has " + std::to_string(h.n_vocab) +
                      " rows");
  }

  std::unordered_set<std::string> known;
  for (const ExpectedTensor& expected : architecture->tensors(h)) {
    known.insert(expected.name);
    const lpx_tensor_view* view = file.find_tensor(expected.name);
    if (view == nullptr) {
      if (expected.required) return invalid_argument("missing tensor '" + expected.name + "'");
      continue;
    }
    if (auto ok = check_tensor(*view, expected); !ok) return unexpected(ok.error());
  }
  h.tied_output = file.find_tensor("output.weight") == nullptr;
  for (const lpx_tensor_view& view : file.tensors()) {
    if (known.count(view.name) == 0) {
      return invalid_argument("unexpected tensor '" + std::string(view.name) + "' for architecture '" +
                        h.architecture + "' with " + std::to_string(h.n_layer) + " layers");
    }
    std::uint64_t elements = 1;
    for (std::uint32_t d = 0; d < view.n_dims; ++d) elements *= static_cast<std::uint64_t>(view.dims[d]);
    h.n_params += elements;
  }
  return h;
}

}  // namespace lpx::core
