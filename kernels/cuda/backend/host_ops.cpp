#include "host_ops.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <lpx/cpp/status.hpp>

#include "cuda/launch.hpp"
#include "cuda_check.hpp"

namespace lpx::cuda_backend {
namespace {

namespace k = kernels::cuda;

k::DeviceWeight device_weight(const lpx_tensor_view& w, const void* data) {
  if (!k::gemv_supports(w.type)) {
    throw lpx::Error(LPX_ERR_UNSUPPORTED,
                     std::string("tensor '") + w.name + "' has a type the cuda backend cannot read");
  }
  k::DeviceWeight d;
  d.type = w.type;
  d.data = data;
  d.columns = w.dims[0];
  d.rows = w.n_dims > 1 ? w.dims[1] : 1;
  d.row_bytes = static_cast<std::size_t>(w.size_bytes / d.rows);
  return d;
}

}  // namespace

HostOps::HostOps() {
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}

HostOps::~HostOps() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

void* HostOps::scratch(int i, std::size_t bytes) {
  if (slots_[i].bytes() < bytes) slots_[i] = DeviceArray<std::uint8_t>(bytes, "kernel scratch");
  return slots_[i].get();
}

void* HostOps::upload(int i, const void* host, std::size_t bytes) {
  void* device = scratch(i, bytes);
  check_cuda(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_), "upload");
  return device;
}

void HostOps::download(void* host, const void* device, std::size_t bytes) {
  check_cuda(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_), "download");
  check_cuda(cudaStreamSynchronize(stream_), "kernel");
}

void HostOps::matmul(const lpx_tensor_view& w, const float* x, float* y, std::size_t batch) {
  if (batch == 0) return;
  const k::DeviceWeight d = device_weight(w, upload(0, w.data, w.size_bytes));
  const std::size_t x_count = batch * static_cast<std::size_t>(d.columns);
  const auto* dx = static_cast<const float*>(upload(1, x, x_count * sizeof(float)));
  const std::size_t y_count = batch * static_cast<std::size_t>(d.rows);
  auto* dy = static_cast<float*>(scratch(2, y_count * sizeof(float)));
  k::gemv(d, dx, dy, static_cast<int>(batch), stream_);  // in groups of kMaxGemvBatch rows
  check_cuda(cudaGetLastError(), "gemv");
  download(y, dy, y_count * sizeof(float));
}

void HostOps::dequantize_row(const lpx_tensor_view& w, std::int64_t row, float* out) {
  const k::DeviceWeight whole = device_weight(w, nullptr);
  const auto* bytes = static_cast<const std::uint8_t*>(w.data) + row * whole.row_bytes;
  k::DeviceWeight one = whole;
  one.rows = 1;
  one.data = upload(0, bytes, whole.row_bytes);
  const std::int32_t zero = 0;
  const auto* token = static_cast<const std::int32_t*>(upload(1, &zero, sizeof zero));
  auto* d_out = static_cast<float*>(scratch(2, whole.columns * sizeof(float)));
  k::embed_rows(one, token, 1, d_out, stream_);
  check_cuda(cudaGetLastError(), "embed_rows");
  download(out, d_out, whole.columns * sizeof(float));
}

void HostOps::rms_norm(const float* x, const float* weight, float* out, std::size_t rows,
                       std::size_t n, float eps) {
  const auto* dx = static_cast<const float*>(upload(0, x, rows * n * sizeof(float)));
  const auto* dw = static_cast<const float*>(upload(1, weight, n * sizeof(float)));
  auto* dout = static_cast<float*>(scratch(2, rows * n * sizeof(float)));
  k::rms_norm(dx, dw, dout, static_cast<int>(rows), static_cast<int>(n), eps, stream_);
  check_cuda(cudaGetLastError(), "rms_norm");
  download(out, dout, rows * n * sizeof(float));
}

void HostOps::rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
                   const std::int32_t* positions, const lpx_rope_params& params) {
  if (params.n_rot == 0) return;  // a NoPE layer: nothing rotates
  const std::size_t count = rows * heads * head_dim;
  auto* dx = static_cast<float*>(upload(0, x, count * sizeof(float)));
  const auto* dp =
      static_cast<const std::int32_t*>(upload(1, positions, rows * sizeof(std::int32_t)));
  k::RopeArgs args;
  args.mode = params.mode;
  args.n_rot = static_cast<int>(params.n_rot);
  args.freq_base = params.freq_base;
  args.freq_scale = params.freq_scale;
  args.attn_factor = params.attn_factor;
  if (params.freq_factors != nullptr) {
    args.freq_factors = static_cast<const float*>(
        upload(2, params.freq_factors, params.n_rot / 2 * sizeof(float)));
  }
  k::rope(dx, static_cast<int>(rows), static_cast<int>(heads), static_cast<int>(head_dim), dp,
          args, stream_);
  check_cuda(cudaGetLastError(), "rope");
  download(x, dx, count * sizeof(float));
}

void HostOps::swiglu(const float* gate, const float* up, float* out, std::size_t n) {
  auto* dg = static_cast<float*>(upload(0, gate, n * sizeof(float)));
  const auto* du = static_cast<const float*>(upload(1, up, n * sizeof(float)));
  k::swiglu(dg, du, dg, n, stream_);
  check_cuda(cudaGetLastError(), "swiglu");
  download(out, dg, n * sizeof(float));
}

void HostOps::geglu(const float* gate, const float* up, float* out, std::size_t n) {
  auto* dg = static_cast<float*>(upload(0, gate, n * sizeof(float)));
  const auto* du = static_cast<const float*>(upload(1, up, n * sizeof(float)));
  k::geglu(dg, du, dg, n, stream_);
  check_cuda(cudaGetLastError(), "geglu");
  download(out, dg, n * sizeof(float));
}

void HostOps::attention(const lpx_attention_args& a) {
  if (a.n_rows == 0) return;
  std::int32_t max_position = 0;
  for (std::uint32_t r = 0; r < a.n_rows; ++r) max_position = std::max(max_position, a.positions[r]);
  const std::uint32_t blocks = static_cast<std::uint32_t>(max_position) / a.block_size + 1;
  std::int32_t pool_blocks = 0;
  for (std::uint32_t b = 0; b < blocks; ++b) pool_blocks = std::max(pool_blocks, a.block_table[b] + 1);
  const std::size_t pool_bytes = std::size_t(pool_blocks) * a.block_size * a.n_kv_heads *
                                 a.head_dim * sizeof(std::uint16_t);
  const std::size_t q_bytes = std::size_t{a.n_rows} * a.n_heads * a.head_dim * sizeof(float);
  const std::vector<std::int32_t> row_sequence(a.n_rows, 0);
  k::AttentionArgs d;
  d.q = static_cast<const float*>(upload(0, a.q, q_bytes));
  d.out = static_cast<float*>(scratch(1, q_bytes));
  d.positions = static_cast<const std::int32_t*>(
      upload(2, a.positions, a.n_rows * sizeof(std::int32_t)));
  d.row_sequence = static_cast<const std::int32_t*>(
      upload(3, row_sequence.data(), a.n_rows * sizeof(std::int32_t)));
  d.block_tables = static_cast<const std::int32_t*>(
      upload(4, a.block_table, blocks * sizeof(std::int32_t)));
  d.block_table_stride = static_cast<int>(blocks);
  d.n_rows = static_cast<int>(a.n_rows);
  d.n_heads = static_cast<int>(a.n_heads);
  d.n_kv_heads = static_cast<int>(a.n_kv_heads);
  d.head_dim = static_cast<int>(a.head_dim);
  d.scale = a.scale;
  d.window = static_cast<int>(a.window);
  d.softcap = a.softcap;
  d.k_pool = static_cast<const std::uint16_t*>(upload(5, a.k_cache, pool_bytes));
  d.v_pool = static_cast<const std::uint16_t*>(upload(6, a.v_cache, pool_bytes));
  d.block_size = static_cast<int>(a.block_size);
  // The split the device model would use on this GPU (results depend on it, not on the batch).
  int device = 0;
  int multiprocessors = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute");
  d.splits = k::attention_splits(multiprocessors, d.n_kv_heads);
  d.partial = static_cast<float*>(scratch(
      7, k::attention_partial_floats(d.n_rows, d.n_heads, d.head_dim, d.splits) * sizeof(float)));
  // The chunk counters: zero before the call (attention leaves them zero).
  const std::size_t counter_bytes = std::size_t{a.n_rows} * a.n_kv_heads * sizeof(std::uint32_t);
  d.chunk_counters = static_cast<std::uint32_t*>(scratch(8, counter_bytes));
  check_cuda(cudaMemsetAsync(d.chunk_counters, 0, counter_bytes, stream_), "attention counters");
  k::attention(d, stream_);
  check_cuda(cudaGetLastError(), "attention");
  download(a.out, d.out, q_bytes);
}

}  // namespace lpx::cuda_backend
