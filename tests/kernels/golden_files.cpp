#include "golden_files.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <sstream>

namespace lpx::kernels::reference::golden {

std::vector<std::uint8_t> read_golden_file(const std::string& file_name) {
  const std::string path = std::string(LPX_KERNELS_GOLDEN_DIR) + "/" + file_name;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ADD_FAILURE() << "cannot open golden file " << path
                  << " (regenerate with tools/make_dequant_goldens.py)";
    return {};
  }
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<GgmlTypeRow> read_ggml_type_table() {
  const std::vector<std::uint8_t> bytes = read_golden_file("ggml_types.tsv");
  std::istringstream text(std::string(bytes.begin(), bytes.end()));
  std::vector<GgmlTypeRow> rows;
  std::string line;
  while (std::getline(text, line)) {
    if (line.empty() || line.front() == '#') continue;
    std::istringstream fields(line);
    GgmlTypeRow row{};
    if (!(fields >> row.id >> row.name >> row.block_elements >> row.block_bytes)) {
      ADD_FAILURE() << "bad line in ggml_types.tsv: " << line;
      continue;
    }
    rows.push_back(row);
  }
  EXPECT_FALSE(rows.empty()) << "ggml_types.tsv lists no types";
  return rows;
}

}  // namespace lpx::kernels::reference::golden
