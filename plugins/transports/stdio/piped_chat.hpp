// Piped mode: all of stdin is one user message; stdout gets the answer and one newline, nothing
// else, so the transport composes with shell pipes. Any failure ends the run with an error.
#pragma once

#include "chat_setup.hpp"

namespace lpx::stdio {

// Throws lpx::Error on any failure, and LPX_ERR_CANCELLED after a stop.
void run_piped_chat(const ChatSetup& setup);

}  // namespace lpx::stdio
