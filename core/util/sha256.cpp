#include "util/sha256.hpp"

#include <openssl/evp.h>

#include <array>
#include <fstream>
#include <memory>
#include <vector>

namespace lpx::core {
namespace {

using Context = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

std::string hex_of(Context& context) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest.data(), &length);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

Context new_context() {
  Context context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (context) EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  return context;
}

}  // namespace

std::string sha256_hex(const void* data, std::size_t size) {
  Context context = new_context();
  EVP_DigestUpdate(context.get(), data, size);
  return hex_of(context);
}

Expected<std::string> sha256_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path + ": cannot be read to hash it");
  Context context = new_context();
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(context.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) return io_error(path + ": read failed while hashing it");
  return hex_of(context);
}

}  // namespace lpx::core
