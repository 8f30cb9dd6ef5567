// Whether a binary's CUDA build fits a machine: the kernel images it carries against a GPU's
// compute capability, and the toolkit it was built with against the driver's CUDA version.
// Pure functions of their inputs, so the rules are testable without a GPU.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lpx::gpu {

// One entry of a CMAKE_CUDA_ARCHITECTURES list: "86" means SASS for sm_86 and PTX for
// compute_86, "86-real" SASS only, "86-virtual" PTX only. "90a" is arch-specific (runs on 9.0
// only), "100f" family-specific (runs on 10.x with x >= 0).
struct CudaArch {
  int number = 0;     // 86 for 8.6, 120 for 12.0
  char variant = 0;   // 0, 'a' or 'f'
  bool sass = false;  // carries a cubin (real architecture)
  bool ptx = false;   // carries PTX (virtual architecture)
};

struct CudaArchList {
  bool cuda = false;                    // false: "disabled", CUDA not built
  std::vector<CudaArch> archs;          // the numbered entries
  std::vector<std::string> unresolved;  // native, all, all-major, OFF...: not known until nvcc ran
};

// Parses a CMake list ("80;86-real;90a"; ',' also separates); "disabled" or "" gives cuda=false.
CudaArchList parse_cuda_architectures(std::string_view list);

// "sm_80 sm_86 (SASS), compute_90 (PTX)" or "disabled".
std::string describe(const CudaArchList& list);

enum class KernelImageKind {
  sass,     // a cubin this GPU runs directly
  ptx,      // PTX the driver compiles for this GPU when the module loads (JIT)
  none,     // nothing: "no kernel image is available for execution on the device"
  unknown,  // the list has entries like "native" whose architectures CMake did not spell out
};

struct KernelImage {
  KernelImageKind kind = KernelImageKind::none;
  int arch = 0;      // the architecture of the image used (sass, ptx)
  char variant = 0;  // its 'a' or 'f' suffix, if any
};

// "90", "90a", "100f": the image's architecture as CMake and nvcc spell it.
std::string arch_name(const KernelImage& image);

// Which image a GPU of compute capability major.minor would load. A cubin for sm_XY runs on
// X.Z for Z >= Y (sm_XYa only on X.Y exactly); PTX for compute_XY is JIT-compiled for any
// later GPU. SASS is preferred, as the driver does.
KernelImage find_kernel_image(const CudaArchList& list, int major, int minor);

struct CudaVersion {
  int major = 0;
  int minor = 0;
  friend bool operator==(const CudaVersion&, const CudaVersion&) = default;
};

// "13.0.88" -> 13.0; nullopt when it does not start with MAJOR.MINOR.
std::optional<CudaVersion> parse_cuda_version(std::string_view text);

// cuDriverGetVersion's 13000 -> 13.0.
CudaVersion driver_cuda_version(int driver_version);

std::string to_string(CudaVersion version);

enum class DriverFit {
  ok,           // the driver supports the toolkit's CUDA version or a newer one
  minor_older,  // same major, older minor: runs (minor-version compatibility) but cannot JIT
                // the toolkit's PTX and lacks the newest features
  too_old,      // older major: "the CUDA driver version is insufficient for the CUDA runtime"
};

DriverFit driver_fit(CudaVersion driver, CudaVersion toolkit);

// The oldest Linux driver branch that supports CUDA `major` (e.g. "580" for 13), or "" if unknown.
std::string minimum_driver_for(int major);

}  // namespace lpx::gpu
