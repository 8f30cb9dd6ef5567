#include "gpu/device_checks.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <vector>

namespace lpx::gpu {
namespace {

// y[i] = a * x[i] + y[i]. Written by hand (the same code nvcc emits for a one-line kernel) so
// the core needs no CUDA compiler; PTX 7.0 / sm_50 is the oldest any current driver accepts
// and is JIT-compiled for whatever GPU runs it.
constexpr const char* kSaxpyPtx = R"(.version 7.0
.target sm_50
.address_size 64

.visible .entry lpx_doctor_saxpy(
	.param .u64 saxpy_x,
	.param .u64 saxpy_y,
	.param .f32 saxpy_a,
	.param .u32 saxpy_n
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<5>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.u64 	%rd1, [saxpy_x];
	ld.param.u64 	%rd2, [saxpy_y];
	ld.param.f32 	%f1, [saxpy_a];
	ld.param.u32 	%r2, [saxpy_n];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.u32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L_done;
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd3, %rd5;
	add.s64 	%rd7, %rd4, %rd5;
	ld.global.f32 	%f2, [%rd6];
	ld.global.f32 	%f3, [%rd7];
	fma.rn.f32 	%f4, %f1, %f2, %f3;
	st.global.f32 	[%rd7], %f4;
$L_done:
	ret;
}
)";

constexpr unsigned kBlock = 256;

// Device memory freed on scope exit.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const CudaDriver& d) : d_(d) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUresult allocate(std::size_t bytes) {
    reset();
    return d_.cuMemAlloc(&pointer_, bytes);
  }
  void reset() {
    if (pointer_ != 0) d_.cuMemFree(pointer_);
    pointer_ = 0;
  }
  CUdeviceptr get() const { return pointer_; }

 private:
  const CudaDriver& d_;
  CUdeviceptr pointer_ = 0;
};

class Event {
 public:
  explicit Event(const CudaDriver& d) : d_(d) {}
  ~Event() {
    if (event_ != nullptr) d_.cuEventDestroy(event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  CUresult create() { return d_.cuEventCreate(&event_, 0); }
  CUevent get() const { return event_; }

 private:
  const CudaDriver& d_;
  CUevent event_ = nullptr;
};

class Module {
 public:
  explicit Module(const CudaDriver& d) : d_(d) {}
  ~Module() {
    if (module_ != nullptr) d_.cuModuleUnload(module_);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  // On failure `log` holds the JIT compiler's error text, if it wrote any.
  CUresult load(const char* image, std::string& log) {
    char buffer[4096] = {};
    int keys[] = {cu::kJitErrorLogBuffer, cu::kJitErrorLogBufferSizeBytes};
    void* values[] = {buffer, reinterpret_cast<void*>(static_cast<std::uintptr_t>(sizeof buffer))};
    const CUresult r = d_.cuModuleLoadDataEx(&module_, image, 2, keys, values);
    log = buffer;
    return r;
  }
  CUmodule get() const { return module_; }

 private:
  const CudaDriver& d_;
  CUmodule module_ = nullptr;
};

}  // namespace

const char* sanity_kernel_ptx() { return kSaxpyPtx; }

SanityResult run_sanity_kernel(const CudaDriver& d, std::size_t elements) {
  SanityResult out;
  out.elements = elements;
  const auto fail = [&](const char* step, CUresult r) {
    out.code = r;
    out.error = std::string(step) + ": " + d.describe(r);
    return out;
  };

  Module module(d);
  std::string jit_log;
  if (const CUresult r = module.load(kSaxpyPtx, jit_log); r != cu::kSuccess) {
    fail("loading the PTX test module (cuModuleLoadDataEx)", r);
    if (!jit_log.empty()) out.error += "; JIT log: " + jit_log;
    return out;
  }
  CUfunction function = nullptr;
  if (const CUresult r = d.cuModuleGetFunction(&function, module.get(), "lpx_doctor_saxpy");
      r != cu::kSuccess) {
    return fail("cuModuleGetFunction", r);
  }

  // Random inputs in [-1, 1), never all zero, so a kernel that does nothing cannot pass.
  std::mt19937 random(20240611);
  std::uniform_real_distribution<float> uniform(-1.0F, 1.0F);
  std::vector<float> x(elements), y(elements), result(elements);
  for (std::size_t i = 0; i < elements; ++i) {
    x[i] = uniform(random);
    y[i] = uniform(random);
  }
  float a = 1.75F;
  const std::size_t bytes = elements * sizeof(float);

  DeviceBuffer dx(d), dy(d);
  if (const CUresult r = dx.allocate(bytes); r != cu::kSuccess) return fail("cuMemAlloc", r);
  if (const CUresult r = dy.allocate(bytes); r != cu::kSuccess) return fail("cuMemAlloc", r);
  if (const CUresult r = d.cuMemcpyHtoD(dx.get(), x.data(), bytes); r != cu::kSuccess) {
    return fail("cuMemcpyHtoD", r);
  }
  if (const CUresult r = d.cuMemcpyHtoD(dy.get(), y.data(), bytes); r != cu::kSuccess) {
    return fail("cuMemcpyHtoD", r);
  }
  CUdeviceptr px = dx.get(), py = dy.get();
  auto n = static_cast<unsigned>(elements);
  void* parameters[] = {&px, &py, &a, &n};
  const auto blocks = static_cast<unsigned>((elements + kBlock - 1) / kBlock);
  if (const CUresult r =
          d.cuLaunchKernel(function, blocks, 1, 1, kBlock, 1, 1, 0, nullptr, parameters, nullptr);
      r != cu::kSuccess) {
    return fail("cuLaunchKernel", r);
  }
  if (const CUresult r = d.cuCtxSynchronize(); r != cu::kSuccess)
    return fail("running the test kernel", r);
  if (const CUresult r = d.cuMemcpyDtoH(result.data(), dy.get(), bytes); r != cu::kSuccess) {
    return fail("cuMemcpyDtoH", r);
  }

  // fma.rn is correctly rounded on both sides, so the results must match bit for bit.
  std::size_t wrong = 0, first = 0;
  for (std::size_t i = 0; i < elements; ++i) {
    const float expected = std::fma(a, x[i], y[i]);
    if (std::memcmp(&expected, &result[i], sizeof expected) != 0 && wrong++ == 0) first = i;
  }
  if (wrong != 0) {
    std::ostringstream message;
    message.precision(9);
    message << "the test kernel computed wrong results: " << wrong << " of " << elements
            << " elements differ from the CPU's; the first, [" << first << "], is " << result[first]
            << " instead of " << std::fma(a, x[first], y[first]);
    out.error = message.str();
    return out;
  }
  out.ok = true;
  return out;
}

BandwidthResult measure_copy_bandwidth(const CudaDriver& d, std::size_t bytes, int repetitions) {
  BandwidthResult out;
  out.repetitions = repetitions;
  const auto fail = [&](const char* step, CUresult r) {
    out.code = r;
    out.error = std::string(step) + ": " + d.describe(r);
    return out;
  };
  constexpr std::size_t kSmallest = std::size_t{16} << 20;
  DeviceBuffer from(d), to(d);
  for (;; bytes /= 2) {
    CUresult r = from.allocate(bytes);
    if (r == cu::kSuccess) {
      r = to.allocate(bytes);
      if (r == cu::kSuccess) break;
      from.reset();
    }
    if (r != cu::kErrorOutOfMemory || bytes / 2 < kSmallest) return fail("cuMemAlloc", r);
  }
  out.bytes = bytes;

  Event start(d), stop(d);
  if (const CUresult r = start.create(); r != cu::kSuccess) return fail("cuEventCreate", r);
  if (const CUresult r = stop.create(); r != cu::kSuccess) return fail("cuEventCreate", r);
  if (const CUresult r = d.cuMemcpyDtoD(to.get(), from.get(), bytes); r != cu::kSuccess) {
    return fail("cuMemcpyDtoD (warm-up)", r);
  }
  if (const CUresult r = d.cuCtxSynchronize(); r != cu::kSuccess)
    return fail("cuCtxSynchronize", r);
  float best_ms = 0;
  for (int i = 0; i < repetitions; ++i) {
    if (const CUresult r = d.cuEventRecord(start.get(), nullptr); r != cu::kSuccess)
      return fail("cuEventRecord", r);
    if (const CUresult r = d.cuMemcpyDtoD(to.get(), from.get(), bytes); r != cu::kSuccess) {
      return fail("cuMemcpyDtoD", r);
    }
    if (const CUresult r = d.cuEventRecord(stop.get(), nullptr); r != cu::kSuccess)
      return fail("cuEventRecord", r);
    if (const CUresult r = d.cuEventSynchronize(stop.get()); r != cu::kSuccess) {
      return fail("cuEventSynchronize", r);
    }
    float ms = 0;
    if (const CUresult r = d.cuEventElapsedTime(&ms, start.get(), stop.get()); r != cu::kSuccess) {
      return fail("cuEventElapsedTime", r);
    }
    if (i == 0 || ms < best_ms) best_ms = ms;
  }
  if (best_ms <= 0) {
    out.error = "the copy took no measurable time";
    return out;
  }
  out.gigabytes_per_second =
      2.0 * static_cast<double>(bytes) / (static_cast<double>(best_ms) * 1e-3) / 1e9;
  return out;
}

}  // namespace lpx::gpu
