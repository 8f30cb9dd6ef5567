// Kernel overlap (set_kernel_overlap, dependent_launch.cuh): a chain of dependent decode
// kernels gives the same bits with and without programmatic dependent launch, launched
// directly and replayed from a CUDA graph. The chain is a decode layer's shape: a GEMV reading
// the normalised residual stream, one adding to it, an interleaved gate/up GEMV storing SwiGLU,
// one adding to it again; each reads what the one before wrote, and the residual stream what
// kernels two and more back wrote. A missing wait shows as differing bits (or, rarely, not at
// all: the test repeats the chain to make a race likely). Skips without a GPU of compute
// capability 9.0 or newer.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../kernels/matmul_test_support.hpp"
#include "cuda/launch.hpp"
#include "gemv_test_support.hpp"
#include "gpu_test_support.hpp"

namespace lpx::kernels::cuda {
namespace {

using test::DeviceBuffer;
using namespace gemv_test;

constexpr std::size_t kWidth = 512, kFf = 1024, kLayers = 12;
constexpr int kBatch = 2;

struct Layer {
  DeviceBytes up_proj, down_proj, gate_up, ffn_down;
  DeviceBuffer<float> norm;
};

class DependentLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    LPX_REQUIRE_GPU();
    matmul_test::Random random(11000u);
    for (std::size_t i = 0; i < kLayers; ++i) {
      Layer layer;
      layer.up_proj = upload_bytes(random_weights(random, LPX_TENSOR_Q4_1, kFf, kWidth), 0);
      layer.down_proj = upload_bytes(random_weights(random, LPX_TENSOR_Q8_0, kWidth, kFf), 0);
      layer.gate_up = upload_bytes(random_weights(random, LPX_TENSOR_Q4_K, 2 * kFf, kWidth), 0);
      layer.ffn_down = upload_bytes(random_weights(random, LPX_TENSOR_BF16, kWidth, kFf), 0);
      std::vector<float> g = random.activations(1, kWidth);
      for (float& v : g) v = 1.0f + 0.1f * v;
      layer.norm = DeviceBuffer<float>(g);
      layers_.push_back(std::move(layer));
    }
    x0_ = random.activations(kBatch, kWidth);
    x_ = DeviceBuffer<float>(x0_);
    device_x0_ = DeviceBuffer<float>(x0_);
    zeros_ = DeviceBuffer<float>(std::vector<float>(x0_.size(), 0.0f));
    hidden_ = DeviceBuffer<float>(kBatch * kFf);
    ASSERT_TRUE(test::cuda_ok(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)));
  }
  void TearDown() override {
    set_kernel_overlap(false);
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }

  // Every layer's four GEMVs on stream_, from x0.
  void enqueue_chain() {
    (void)cudaMemcpyAsync(x_.get(), device_x0_.get(), x0_.size() * sizeof(float),
                          cudaMemcpyDeviceToDevice, stream_);
    // An ordinary kernel (x += 0) between the copy and the first dependent launch, as the
    // model's embedding kernel is: programmatic edges join kernel nodes only.
    add_in_place(x_.get(), zeros_.get(), x0_.size(), stream_);
    for (const Layer& l : layers_) {
      const GemvInput normed{x_.get(), l.norm.get(), 1e-5f};
      gemv(device_weight(LPX_TENSOR_Q4_1, l.up_proj, kFf, kWidth), normed,
           single_gemv_output(hidden_.get(), kFf), kBatch, stream_);
      gemv(device_weight(LPX_TENSOR_Q8_0, l.down_proj, kWidth, kFf), GemvInput{hidden_.get()},
           single_gemv_output(x_.get(), kWidth, nullptr, GemvStore::kAccumulate), kBatch,
           stream_);
      gemv(device_weight(LPX_TENSOR_Q4_K, l.gate_up, 2 * kFf, kWidth), normed,
           single_gemv_output(hidden_.get(), kFf, nullptr, GemvStore::kSwigluPairs), kBatch,
           stream_);
      gemv(device_weight(LPX_TENSOR_BF16, l.ffn_down, kWidth, kFf), GemvInput{hidden_.get()},
           single_gemv_output(x_.get(), kWidth, nullptr, GemvStore::kAccumulate), kBatch,
           stream_);
    }
  }

  std::vector<float> run_direct() {
    enqueue_chain();
    EXPECT_TRUE(test::cuda_ok(cudaGetLastError()));
    EXPECT_TRUE(test::cuda_ok(cudaStreamSynchronize(stream_)));
    return x_.download();
  }

  std::vector<std::vector<float>> run_graph(int replays) {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    std::vector<std::vector<float>> results;
    EXPECT_TRUE(test::cuda_ok(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal)));
    enqueue_chain();
    EXPECT_TRUE(test::cuda_ok(cudaStreamEndCapture(stream_, &graph)));
    EXPECT_TRUE(test::cuda_ok(cudaGraphInstantiate(&exec, graph, 0)));
    for (int i = 0; i < replays && exec != nullptr; ++i) {
      EXPECT_TRUE(test::cuda_ok(cudaGraphLaunch(exec, stream_)));
      EXPECT_TRUE(test::cuda_ok(cudaStreamSynchronize(stream_)));
      results.push_back(x_.download());
    }
    if (exec != nullptr) (void)cudaGraphExecDestroy(exec);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    return results;
  }

  std::vector<Layer> layers_;
  std::vector<float> x0_;
  DeviceBuffer<float> device_x0_, zeros_, x_, hidden_;
  cudaStream_t stream_ = nullptr;
};

TEST_F(DependentLaunch, OverlappedKernelsGiveTheSameBits) {
  ASSERT_FALSE(set_kernel_overlap(false));
  const std::vector<float> expected = run_direct();
  for (const float v : expected) ASSERT_TRUE(std::isfinite(v));
  EXPECT_FALSE(matmul_test::same_bits(expected, x0_)) << "the chain changed nothing";
  for (const auto& replay : run_graph(2)) EXPECT_TRUE(matmul_test::same_bits(expected, replay));

  if (!set_kernel_overlap(true)) {
    GTEST_SKIP() << "programmatic dependent launch needs compute capability 9.0 or newer";
  }
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(matmul_test::same_bits(expected, run_direct())) << "direct run " << i;
  }
  const auto replays = run_graph(20);
  for (std::size_t i = 0; i < replays.size(); ++i) {
    EXPECT_TRUE(matmul_test::same_bits(expected, replays[i])) << "graph replay " << i;
  }
}

}  // namespace
}  // namespace lpx::kernels::cuda
