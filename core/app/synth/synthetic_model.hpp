// A synthetic model: a named real model's architecture, shapes and vocabulary size, with random
// weights in the chosen tensor type, written as GGUF (see model_shapes.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lpx/kinds/tensor.h"
#include "quantize/quantization_plan.hpp"
#include "synth/model_shapes.hpp"
#include "util/expected.hpp"

namespace lpx::core::synth {

// What synth writes: one type for every matrix (the output head and rows that are not whole
// super-blocks aside, see synthetic_model.cpp), or a llama-quantize mix, each tensor typed as
// `lpx-pipeline quantize` (and llama-quantize) types it for that mix.
struct SynthType {
  lpx_tensor_type type;           // the single type, or the mix's base type
  bool mixed = false;             // typed per tensor as `mix` plans it
  QuantMix mix = QuantMix::F16;   // when mixed
  SynthType(lpx_tensor_type t) : type(t) {}  // NOLINT(google-explicit-constructor): a plain type
  SynthType(lpx_tensor_type t, QuantMix m) : type(t), mixed(true), mix(m) {}
};

// "F16", "bf16", "Q8_0", "q4_k", "Q4_K_M" … -> the type; nullopt for the names synth does not write.
std::optional<SynthType> synth_type(const std::string& name);
std::string synth_type_names();  // "F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K, Q4_K_M"

struct SynthResult {
  std::uint64_t bytes = 0;
  std::uint64_t parameters = 0;
  std::string notes;  // e.g. which tensors fell back to another type
};

Expected<SynthResult> write_synthetic_model(const ModelShape& shape, SynthType type,
                                            std::uint64_t seed, const std::string& path);

// A model argument as `bench --model` takes it: a file path, returned as it is, or
// synth:NAME:TYPE, written once (seed 1) into the temp directory as lpx-synth-v4-NAME-TYPE.gguf
// (v4: the layout version) and reused (the same name, type and seed give the same bytes). The file appears whole or not
// at all: it is written under another name and renamed.
Expected<std::string> resolve_model_spec(const std::string& model);

}  // namespace lpx::core::synth
