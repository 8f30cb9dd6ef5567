#include "engine/engine_c_api.hpp"

#include "lpx/cpp/status.hpp"

namespace lpx::core {
namespace {

Engine& self(lpx_engine* engine) noexcept { return *reinterpret_cast<Engine*>(engine); }

void info(lpx_engine* engine, lpx_engine_info* out) noexcept {
  if (out == nullptr || out->struct_size < sizeof(lpx_engine_info)) return;
  self(engine).info(*out);
}

lpx_status* submit(lpx_engine* engine, const lpx_request* request, uint64_t* out_id) noexcept {
  if (request == nullptr || out_id == nullptr) {
    return make_status(LPX_ERR_INVALID_ARGUMENT, "submit: NULL request or out_id");
  }
  return guard([&] {
    auto id = self(engine).submit(*request);
    if (!id) throw Error(LPX_ERR_INVALID_ARGUMENT, id.error());
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

constexpr lpx_engine_api kApi{sizeof(lpx_engine_api), &info, &submit, &cancel, &wait,
                              &session_create, &session_destroy};

}  // namespace

const lpx_engine_api& engine_c_api() noexcept { return kApi; }

}  // namespace lpx::core
