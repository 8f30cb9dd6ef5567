# Writes OUTPUT, a C++ file defining lpx::http::chat_page_html() as the bytes of INPUT.
file(READ "${INPUT}" page)
string(FIND "${page}" ")LPXPAGE\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )LPXPAGE\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed_page.cmake; do not edit.\n"
  "#include \"chat_page.hpp\"\n\n"
  "namespace lpx::http {\n\n"
  "std::string_view chat_page_html() noexcept {\n"
  "  static constexpr char kPage[] = R\"LPXPAGE(${page})LPXPAGE\";\n"
  "  return {kPage, sizeof kPage - 1};\n"
  "}\n\n"
  "}  // namespace lpx::http\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
