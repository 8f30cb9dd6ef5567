#include "device_weights.hpp"

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <lpx/cpp/status.hpp>

namespace lpx::cuda_backend {
namespace {

constexpr std::size_t kAlignment = 256;  // every tensor starts on a 256-byte boundary

std::size_t aligned(std::size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

// Plans the single allocation: each distinct host tensor once, in order of first use.
class Layout {
 public:
  // The offset of a contiguous copy of `bytes` at host, placed on first use. A tensor whose rows
  // were interleaved into a stack gets a copy of its own (its data used by a second matrix).
  std::size_t add(const void* host, std::size_t bytes) {
    auto& offsets = interleaved_.count(host) != 0 ? copies_ : offsets_;
    auto [it, inserted] = offsets.try_emplace(host, total_);
    if (inserted) {
      order_.push_back({host, bytes, total_});
      sizes_[host] = bytes;
      total_ += aligned(bytes);
    } else if (auto size = sizes_.find(host); size != sizes_.end() && size->second < bytes) {
      // Shared by pointer (a tied head, rope factors of several layers): the first use must
      // have placed all the bytes a later one reads.
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT,
                       "model description: a tensor is used with " + std::to_string(bytes) +
                           " bytes after " + std::to_string(size->second));
    }
    return it->second;
  }
  // Places the pieces back to back (no padding between them), or with `rows` rows each of
  // `row_bytes` interleaved row by row (row r of piece p at (r * count + p) * row_bytes), when
  // none is placed yet; returns the stack's offset, or nothing (then nothing is placed).
  std::optional<std::size_t> add_stack(const std::vector<std::pair<const void*, std::size_t>>& pieces,
                                       bool interleave, std::size_t rows, std::size_t row_bytes) {
    for (const auto& piece : pieces) {
      if (offsets_.count(piece.first) != 0) return std::nullopt;
    }
    const std::size_t start = total_;
    if (interleave) {  // one piece, assembled on the host from its sources
      Piece stack{nullptr, rows * row_bytes * pieces.size(), start};
      stack.rows = rows;
      stack.row_bytes = row_bytes;
      for (const auto& piece : pieces) {
        offsets_.emplace(piece.first, start);
        interleaved_.insert(piece.first);
        stack.sources.push_back(piece.first);
      }
      order_.push_back(std::move(stack));
      total_ = aligned(start + order_.back().bytes);
      return start;
    }
    std::size_t offset = start;
    for (const auto& [host, bytes] : pieces) {
      offsets_.emplace(host, offset);
      order_.push_back({host, bytes, offset});
      offset += bytes;
    }
    total_ = aligned(offset);
    return start;
  }
  std::size_t total() const noexcept { return total_; }
  struct Piece {
    const void* host;  // null for an interleaved stack: its rows come from `sources`
    std::size_t bytes;
    std::size_t offset;
    std::vector<const void*> sources = {};  // row r of source p: row r * sources.size() + p
    std::size_t rows = 0;
    std::size_t row_bytes = 0;
  };
  const std::vector<Piece>& pieces() const noexcept { return order_; }

 private:
  std::map<const void*, std::size_t> offsets_;
  std::map<const void*, std::size_t> copies_;  // contiguous copies of interleaved tensors
  std::map<const void*, std::size_t> sizes_;   // bytes placed by add(), per host pointer
  std::set<const void*> interleaved_;
  std::vector<Piece> order_;
  std::size_t total_ = 0;
};

void require(const lpx_tensor_view* view, const char* what) {
  if (view == nullptr || view->data == nullptr) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, std::string("model description lacks ") + what);
  }
}

// True when the matrices can be one stacked matrix: same type, columns and row size.
bool stackable(const std::vector<const lpx_tensor_view*>& views) {
  for (const lpx_tensor_view* v : views) {
    if (v == nullptr || v->data == nullptr || v->n_dims != 2) return false;
    const lpx_tensor_view* first = views.front();
    if (v->type != first->type || v->dims[0] != first->dims[0] ||
        v->size_bytes / v->dims[1] != first->size_bytes / first->dims[1]) {
      return false;
    }
  }
  return true;
}

}  // namespace

DeviceWeights::DeviceWeights(const DenseModel& desc) {
  Layout layout;
  // First pass: offsets. Matrices remember their offset in `pending` until the base is known.
  struct PendingMatrix {
    DeviceWeight* target;
    const lpx_tensor_view* view;
    std::size_t offset;
  };
  struct PendingFloats {
    const float** target;
    std::size_t offset;
  };
  std::vector<PendingMatrix> matrices;
  std::vector<PendingFloats> floats;
  // Stacks first, so their parts are placed together before anything else takes one of them.
  struct PendingStack {
    DeviceWeight* target;
    std::vector<const lpx_tensor_view*> parts;
    std::size_t offset;
    std::vector<DeviceWeight*> part_targets;  // cleared when interleaved: no longer matrices
  };
  std::vector<PendingStack> stacks;
  // Views whose rows live only interleaved in a stack: no matrix of their own.
  std::set<const lpx_tensor_view*> interleaved_parts;
  auto stack = [&](DeviceWeight& target, std::vector<const lpx_tensor_view*> parts,
                   std::vector<DeviceWeight*> part_targets, bool interleave) {
    if (!stackable(parts)) return;
    const std::int64_t rows = parts.front()->dims[1];
    if (interleave) {
      for (const lpx_tensor_view* v : parts) {
        if (v->dims[1] != rows) return;
      }
    }
    std::vector<std::pair<const void*, std::size_t>> pieces;
    for (const lpx_tensor_view* v : parts) {
      pieces.emplace_back(v->data, static_cast<std::size_t>(v->size_bytes));
    }
    const auto row_bytes = static_cast<std::size_t>(parts.front()->size_bytes / rows);
    const auto offset =
        layout.add_stack(pieces, interleave, static_cast<std::size_t>(rows), row_bytes);
    if (offset) {
      if (interleave) interleaved_parts.insert(parts.begin(), parts.end());
      stacks.push_back({&target, std::move(parts), *offset,
                        interleave ? std::move(part_targets) : std::vector<DeviceWeight*>{}});
    }
  };
  auto matrix = [&](DeviceWeight& target, const lpx_tensor_view* view, const char* what) {
    require(view, what);
    if (!kernels::cuda::gemv_supports(view->type)) {
      throw lpx::Error(LPX_ERR_UNSUPPORTED, std::string("tensor '") + view->name +
                                                "' has a type the cuda backend cannot multiply");
    }
    target.type = view->type;
    target.columns = view->dims[0];
    target.rows = view->n_dims > 1 ? view->dims[1] : 1;
    target.row_bytes = static_cast<std::size_t>(view->size_bytes / target.rows);
    max_columns_ = std::max(max_columns_, target.columns);
    max_rows_ = std::max(max_rows_, target.rows);
    if (interleaved_parts.count(view) != 0) return;  // cleared below: the stack serves it
    matrices.push_back({&target, view, layout.add(view->data, view->size_bytes)});
  };
  auto vector = [&](const float*& target, const void* host, std::size_t count) {
    if (host == nullptr) return;
    floats.push_back({&target, layout.add(host, count * sizeof(float))});
  };
  auto norm = [&](const float*& target, const lpx_tensor_view* view, const char* what) {
    require(view, what);
    vector(target, view->data, static_cast<std::size_t>(view->size_bytes / sizeof(float)));
  };

  layers.resize(desc.n_layer);
  for (std::uint32_t i = 0; i < desc.n_layer; ++i) {
    const DenseLayer& from = desc.layers[i];
    DeviceLayer& to = layers[i];
    stack(to.wqkv, {from.wq, from.wk, from.wv}, {}, false);
    stack(to.ffn_gate_up, {from.ffn_gate, from.ffn_up}, {&to.ffn_gate, &to.ffn_up}, true);
  }
  matrix(token_embd, desc.token_embd, "token_embd");
  norm(output_norm, desc.output_norm, "output_norm");
  matrix(output, desc.output, "output");
  const std::size_t q_width = std::size_t{desc.n_head} * desc.head_dim;
  const std::size_t kv_width = std::size_t{desc.n_head_kv} * desc.head_dim;
  for (std::uint32_t i = 0; i < desc.n_layer; ++i) {
    const DenseLayer& from = desc.layers[i];
    DeviceLayer& to = layers[i];
    norm(to.attn_norm, from.attn_norm, "attn_norm");
    matrix(to.wq, from.wq, "attn_q");
    matrix(to.wk, from.wk, "attn_k");
    matrix(to.wv, from.wv, "attn_v");
    matrix(to.wo, from.wo, "attn_output");
    vector(to.bq, from.bq, q_width);
    vector(to.bk, from.bk, kv_width);
    vector(to.bv, from.bv, kv_width);
    vector(to.q_norm, from.q_norm, desc.head_dim);
    vector(to.k_norm, from.k_norm, desc.head_dim);
    vector(to.post_attention_norm, from.post_attention_norm, desc.n_embd);
    vector(to.post_ffn_norm, from.post_ffn_norm, desc.n_embd);
    vector(to.rope_freq_factors, from.rope.freq_factors, from.rope.n_rot / 2);
    norm(to.ffn_norm, from.ffn_norm, "ffn_norm");
    matrix(to.ffn_gate, from.ffn_gate, "ffn_gate");
    matrix(to.ffn_up, from.ffn_up, "ffn_up");
    matrix(to.ffn_down, from.ffn_down, "ffn_down");
  }

  storage_ = DeviceArray<std::uint8_t>(layout.total(), "the model weights");
  std::vector<std::uint8_t> interleaved;  // a stack's rows in device order, one copy each
  for (const Layout::Piece& piece : layout.pieces()) {
    const void* from = piece.host;
    if (!piece.sources.empty()) {
      interleaved.resize(piece.bytes);
      const std::size_t n = piece.sources.size();
      for (std::size_t r = 0; r < piece.rows; ++r) {
        for (std::size_t p = 0; p < n; ++p) {
          std::memcpy(interleaved.data() + (r * n + p) * piece.row_bytes,
                      static_cast<const std::uint8_t*>(piece.sources[p]) + r * piece.row_bytes,
                      piece.row_bytes);
        }
      }
      from = interleaved.data();
    }
    check_cuda(cudaMemcpy(storage_.get() + piece.offset, from, piece.bytes,
                          cudaMemcpyHostToDevice),
               "copying the weights to the GPU");
  }
  for (const PendingMatrix& m : matrices) m.target->data = storage_.get() + m.offset;
  for (const PendingStack& s : stacks) {  // the parts' type and width, all their rows
    const lpx_tensor_view* first = s.parts.front();
    DeviceWeight& stacked = *s.target;
    stacked.type = first->type;
    stacked.columns = first->dims[0];
    stacked.row_bytes = static_cast<std::size_t>(first->size_bytes / first->dims[1]);
    stacked.rows = 0;
    for (const lpx_tensor_view* part : s.parts) stacked.rows += part->dims[1];
    stacked.data = storage_.get() + s.offset;
    for (DeviceWeight* part : s.part_targets) *part = DeviceWeight{};
  }
  for (const PendingFloats& f : floats) {
    *f.target = reinterpret_cast<const float*>(storage_.get() + f.offset);
  }
}

}  // namespace lpx::cuda_backend
