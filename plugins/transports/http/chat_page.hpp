// The chat page served at GET / (web/chat.html, embedded at build time by embed_page.cmake).
#pragma once

#include <string_view>

namespace lpx::http {

std::string_view chat_page_html() noexcept;

}  // namespace lpx::http
