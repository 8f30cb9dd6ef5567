// Removes a file when the scope ends unless keep() was called: how a writer that goes through
// OUT.partial leaves nothing behind when it fails or is stopped.
#pragma once

#include <filesystem>
#include <string>
#include <utility>

namespace lpx::core {

class RemoveUnlessKept {
 public:
  explicit RemoveUnlessKept(std::string path) : path_(std::move(path)) {}
  ~RemoveUnlessKept() {
    std::error_code ignored;
    if (!keep_) std::filesystem::remove(path_, ignored);
  }
  RemoveUnlessKept(const RemoveUnlessKept&) = delete;
  RemoveUnlessKept& operator=(const RemoveUnlessKept&) = delete;

  void keep() noexcept { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace lpx::core
