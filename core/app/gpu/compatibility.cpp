#include "gpu/compatibility.hpp"

#include <cctype>
#include <charconv>

namespace lpx::gpu {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "86", "90a", "100f" -> the arch; nullopt for anything else.
std::optional<CudaArch> parse_arch_number(std::string_view entry) {
  CudaArch arch;
  const auto [end, error] = std::from_chars(entry.data(), entry.data() + entry.size(), arch.number);
  if (error != std::errc() || arch.number < 10) return std::nullopt;
  const std::string_view rest(end, static_cast<std::size_t>(entry.data() + entry.size() - end));
  if (rest == "a" || rest == "f") {
    arch.variant = rest.front();
  } else if (!rest.empty()) {
    return std::nullopt;
  }
  return arch;
}

int major_of(int arch) { return arch / 10; }
int minor_of(int arch) { return arch % 10; }

std::string arch_suffix(const CudaArch& a) {
  return std::to_string(a.number) + (a.variant != 0 ? std::string(1, a.variant) : "");
}

// Whether an image built for `a` runs on compute capability `cc` (major * 10 + minor).
bool sass_runs_on(const CudaArch& a, int cc) {
  if (a.variant == 'a') return a.number == cc;
  return major_of(a.number) == major_of(cc) && minor_of(a.number) <= minor_of(cc);
}

bool ptx_runs_on(const CudaArch& a, int cc) {
  if (a.variant != 0)
    return sass_runs_on(a, cc);  // arch- and family-specific PTX do not carry forward
  return a.number <= cc;
}

}  // namespace

CudaArchList parse_cuda_architectures(std::string_view list) {
  CudaArchList out;
  list = trim(list);
  if (list == "disabled") return out;
  out.cuda = true;
  while (!list.empty()) {
    const std::size_t cut = list.find_first_of(";,");
    std::string_view entry = trim(list.substr(0, cut));
    list = cut == std::string_view::npos ? std::string_view() : list.substr(cut + 1);
    if (entry.empty()) continue;
    bool sass = true, ptx = true;
    std::string_view number = entry;
    if (ends_with(entry, "-real")) {
      number.remove_suffix(5);
      ptx = false;
    } else if (ends_with(entry, "-virtual")) {
      number.remove_suffix(8);
      sass = false;
    }
    if (auto arch = parse_arch_number(number)) {
      arch->sass = sass;
      arch->ptx = ptx;
      out.archs.push_back(*arch);
    } else {
      out.unresolved.emplace_back(entry);
    }
  }
  if (out.archs.empty() && out.unresolved.empty()) out.unresolved.emplace_back("nvcc's default");
  return out;
}

std::string describe(const CudaArchList& list) {
  if (!list.cuda) return "disabled";
  std::string sass, ptx;
  for (const CudaArch& a : list.archs) {
    if (a.sass) sass += (sass.empty() ? "sm_" : " sm_") + arch_suffix(a);
    if (a.ptx) ptx += (ptx.empty() ? "compute_" : " compute_") + arch_suffix(a);
  }
  std::string out;
  if (!sass.empty()) out += sass + " (SASS)";
  if (!ptx.empty()) out += (out.empty() ? "" : ", ") + ptx + " (PTX)";
  for (const std::string& u : list.unresolved) out += (out.empty() ? "" : ", ") + u;
  return out;
}

KernelImage find_kernel_image(const CudaArchList& list, int major, int minor) {
  const int cc = major * 10 + minor;
  KernelImage best;
  for (const CudaArch& a : list.archs) {  // the newest matching cubin
    if (a.sass && sass_runs_on(a, cc) &&
        (best.kind != KernelImageKind::sass || a.number > best.arch)) {
      best = {KernelImageKind::sass, a.number, a.variant};
    }
  }
  if (best.kind == KernelImageKind::sass) return best;
  for (const CudaArch& a : list.archs) {  // else the newest PTX that can be JIT-compiled for it
    if (a.ptx && ptx_runs_on(a, cc) &&
        (best.kind != KernelImageKind::ptx || a.number > best.arch)) {
      best = {KernelImageKind::ptx, a.number, a.variant};
    }
  }
  if (best.kind == KernelImageKind::ptx) return best;
  if (!list.unresolved.empty()) return {KernelImageKind::unknown, 0, 0};
  return best;
}

std::string arch_name(const KernelImage& image) {
  return std::to_string(image.arch) + (image.variant != 0 ? std::string(1, image.variant) : "");
}

std::optional<CudaVersion> parse_cuda_version(std::string_view text) {
  CudaVersion v;
  const char* end = text.data() + text.size();
  auto [p, e] = std::from_chars(text.data(), end, v.major);
  if (e != std::errc() || p == end || *p != '.') return std::nullopt;
  auto [q, f] = std::from_chars(p + 1, end, v.minor);
  if (f != std::errc() || (q != end && *q != '.')) return std::nullopt;
  return v;
}

CudaVersion driver_cuda_version(int driver_version) {
  return {driver_version / 1000, driver_version % 1000 / 10};
}

std::string to_string(CudaVersion version) {
  return std::to_string(version.major) + "." + std::to_string(version.minor);
}

DriverFit driver_fit(CudaVersion driver, CudaVersion toolkit) {
  if (driver.major > toolkit.major ||
      (driver.major == toolkit.major && driver.minor >= toolkit.minor)) {
    return DriverFit::ok;
  }
  return driver.major == toolkit.major ? DriverFit::minor_older : DriverFit::too_old;
}

std::string minimum_driver_for(int major) {
  // NVIDIA's CUDA toolkit release notes, "CUDA minor version compatibility" (Linux).
  switch (major) {
    case 11:
      return "450.80.02";
    case 12:
      return "525.60.13";
    case 13:
      return "580";
    default:
      return "";
  }
}

}  // namespace lpx::gpu
