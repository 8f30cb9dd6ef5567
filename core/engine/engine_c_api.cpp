#include "engine/engine_c_api.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "lpx/cpp/status.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::core {
namespace {

Engine& self(lpx_engine* engine) noexcept { return *reinterpret_cast<Engine*>(engine); }

// Inside guard(): the failure leaves as an lpx_status with its code and field.
[[noreturn]] void throw_status(const Status& status) {
  throw Error(status.code, status.message, status.field);
}

void info(lpx_engine* engine, lpx_engine_info* out) noexcept {
  if (out == nullptr || out->struct_size < offsetof(lpx_engine_info, backend)) return;
  self(engine).info(*out);
}

lpx_status* submit(lpx_engine* engine, const lpx_request* request, uint64_t* out_id) noexcept {
  if (request == nullptr || out_id == nullptr) {
    return make_status(LPX_ERR_INVALID_ARGUMENT, "submit: NULL request or out_id");
  }
  return guard([&] {
    auto id = self(engine).submit(*request);
    if (!id) throw_status(id.error());
    *out_id = *id;
  });
}

void cancel(lpx_engine* engine, uint64_t id) noexcept { self(engine).cancel(id); }

void wait(lpx_engine* engine, uint64_t id) noexcept { self(engine).wait(id); }

lpx_status* session_create(lpx_engine* engine, uint64_t* out_session) noexcept {
  if (out_session == nullptr) return make_status(LPX_ERR_INVALID_ARGUMENT, "NULL out_session");
  return guard([&] { *out_session = self(engine).session_create(); });
}

void session_destroy(lpx_engine* engine, uint64_t session) noexcept {
  self(engine).session_destroy(session);
}

void stats(lpx_engine* engine, lpx_engine_stats* out) noexcept {
  if (out == nullptr || out->struct_size < sizeof(lpx_engine_stats)) return;
  self(engine).stats(*out);
}

lpx_status* tokenize(lpx_engine* engine, const char* text, size_t length, uint32_t flags,
                     int32_t* out_tokens, size_t capacity, size_t* out_count) noexcept {
  if ((text == nullptr && length != 0) || out_count == nullptr ||
      (out_tokens == nullptr && capacity != 0)) {
    return make_status(LPX_ERR_INVALID_ARGUMENT, "tokenize: NULL text, out_tokens or out_count");
  }
  return guard([&] {
    const std::string_view view(text == nullptr ? "" : text, length);
    if (!utf8::is_well_formed(view)) {
      throw Error(LPX_ERR_INVALID_ARGUMENT, "the text is not valid UTF-8");
    }
    Tokenizer::EncodeOptions options;
    options.add_bos = options.add_eos = (flags & LPX_TOKENIZE_ADD_SPECIAL) != 0;
    options.parse_special = (flags & LPX_TOKENIZE_PARSE_SPECIAL) != 0;
    auto tokens = self(engine).tokenizer().encode(view, options);
    if (!tokens) throw_status(tokens.error());
    std::copy_n(tokens->begin(), std::min(capacity, tokens->size()), out_tokens);
    *out_count = tokens->size();
  });
}

lpx_status* detokenize(lpx_engine* engine, const int32_t* tokens, size_t count, uint32_t flags,
                       char* out_text, size_t capacity, size_t* out_length) noexcept {
  if ((tokens == nullptr && count != 0) || out_length == nullptr ||
      (out_text == nullptr && capacity != 0)) {
    return make_status(LPX_ERR_INVALID_ARGUMENT, "detokenize: NULL tokens, out_text or out_length");
  }
  return guard([&] {
    auto bytes = self(engine).tokenizer().decode(
        std::span<const std::int32_t>(tokens, count), (flags & LPX_DETOKENIZE_RENDER_SPECIAL) != 0);
    if (!bytes) throw_status(bytes.error());
    const std::string text = utf8::repair(*bytes);
    if (capacity != 0) std::memcpy(out_text, text.data(), std::min(capacity, text.size()));
    *out_length = text.size();
  });
}

constexpr lpx_engine_api kApi{sizeof(lpx_engine_api), &info,       &submit,  &cancel,
                              &wait,                  &session_create, &session_destroy,
                              &stats,                 &tokenize,   &detokenize};

}  // namespace

const lpx_engine_api& engine_c_api() noexcept { return kApi; }

}  // namespace lpx::core
