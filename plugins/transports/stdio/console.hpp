// Console: the chat's two output streams. stdout carries only what the user asked for (answers,
// and the "> " prompt in interactive mode), so `... | lpx-pipeline run chat.toml > answer.txt`
// gets the answer alone; greetings, notices, statistics and errors go to stderr.
// Every write is flushed at once: answers appear piece by piece as they are generated.
#pragma once

#include <string_view>

namespace lpx::stdio {

// False when stdout cannot be written (e.g. a closed pipe). Never throws: it runs inside the
// engine's token callback.
bool write_out(std::string_view text) noexcept;
void write_err(std::string_view text) noexcept;

}  // namespace lpx::stdio
