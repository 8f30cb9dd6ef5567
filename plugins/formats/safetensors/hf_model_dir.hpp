// A Hugging Face model directory opened for LPX: config.json, the safetensors weights (one file,
// or shards listed by model.safetensors.index.json), tokenizer.json, tokenizer_config.json and
// the chat template, read and validated completely, and presented as GGUF-named metadata and
// tensors.
//
// Weights stay in the read-only mappings of their files, except the few the reader must change:
// 1-D tensors (norms, biases) become f32, Gemma's norms gain their 1, and Llama-style q/k rows
// are reordered for GGUF's rope. Those live in buffers the directory owns.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <lpx/kinds/tensor.h>
#include <tl/expected.hpp>

#include "mapped_file.hpp"
#include "metadata_table.hpp"
#include "safetensors_limits.hpp"

namespace lpx::safetensors {

class HfModelDir {
 public:
  // `path`: the model's directory, or one of its .safetensors files. Errors name the file within
  // the directory and what is wrong in it (the host adds the directory).
  static tl::expected<std::unique_ptr<HfModelDir>, std::string> open(const std::string& path,
                                                                      const Limits& limits = {});

  const MetadataTable& metadata() const noexcept { return metadata_; }
  const std::vector<lpx_tensor_view>& tensors() const noexcept { return views_; }

 private:
  HfModelDir() = default;

  MetadataTable metadata_;
  std::vector<formats::MappedFile> shards_;
  std::vector<std::string> names_;                  // GGUF names, one per view
  std::vector<std::vector<std::uint8_t>> buffers_;  // converted tensors
  std::vector<lpx_tensor_view> views_;
};

// Whether `path` looks like a Hugging Face model directory (or a .safetensors file in one):
// config.json beside model.safetensors or model.safetensors.index.json.
bool looks_like_hf_model(const std::string& path);

}  // namespace lpx::safetensors
