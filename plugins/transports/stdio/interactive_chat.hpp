// Interactive mode: a multi-turn chat. A greeting on stderr, then "> " on stdout before each
// line the user types; each line is a user turn, answered by streaming to stdout. Commands:
// /reset (a new conversation), /quit (or Ctrl-D) to leave, /help. A failed answer (e.g. the
// context is full) is reported on stderr and the chat goes on.
#pragma once

#include "chat_setup.hpp"

namespace lpx::stdio {

// Returns at /quit or end of input; throws LPX_ERR_CANCELLED after a stop, lpx::Error when
// stdin or stdout fails.
void run_interactive_chat(const ChatSetup& setup);

}  // namespace lpx::stdio
