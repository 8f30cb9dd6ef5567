// The stdio transport end to end: the real `lpx-pipeline run` with the shared tiny model, the
// cpu backend and greedy sampling, fed through a stdin pipe (so "auto" means piped mode).
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugins/stdio_test_process.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

const fs::path kShared = fs::path(LPX_SOURCE_DIR) / ".." / "shared";
const fs::path kTinyModel = kShared / "models" / "llama-2-tiny-random.gguf";
// The tiny model has no template of its own; a ChatML one works with any vocabulary.
const fs::path kTemplate = kShared / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja";

// The vectorised cpu backend when this build has it, else the portable reference kernels.
std::string backend() {
  return fs::exists(fs::path(LPX_BUILTIN_PLUGIN_DIR) / "lpx-cpu.so") ? "cpu" : "cpu-scalar";
}

const std::string kQuestion = "What is the capital of France?";
const std::string kStatsPattern =
    "\\[ttft [0-9]+ ms \xC2\xB7 [0-9]+\\.[0-9] tok/s \xC2\xB7 [0-9]+ tokens \xC2\xB7 context "
    "([0-9]+)/([0-9]+)(?: \xC2\xB7 ([0-9]+) cached)?(?: \xC2\xB7 drafts ([0-9]+)/([0-9]+) accepted)?\\]\n";

class StdioTransport : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kTinyModel)) << kTinyModel << " is missing (../shared test data)";
    ASSERT_TRUE(fs::exists(kTemplate)) << kTemplate << " is missing (../shared test data)";
  }

  // A chat pipeline over the tiny model; `transport` lines go into [transport], `model` lines
  // into [model]. Answers are short unless `max_tokens` says otherwise.
  std::string pipeline(const std::string& transport = "", const std::string& model = "",
                       int max_tokens = 8) {
    const fs::path path = dir / "chat.toml";
    std::string text = "[pipeline]\nname = \"stdio-test\"\n\n[model]\nplugin = \"gguf\"\n";
    text += "path = \"" + kTinyModel.string() + "\"\n";
    text += "chat_template = \"" + kTemplate.string() + "\"\n" + model;
    text += "\n[backend]\nplugin = \"" + backend() + "\"\n";
    text += "\n[sampler]\nplugin = \"greedy\"\n";
    text += "\n[transport]\nplugin = \"stdio\"\nmax_tokens = " + std::to_string(max_tokens) + "\n";
    write_file(path, text + transport);
    return path.string();
  }
  std::string interactive_pipeline(const std::string& extra = "") {
    return pipeline("interactive = \"always\"\n" + extra);
  }

  TempDir dir;
};

struct TurnStats {
  long used = 0;    // prompt + answer tokens
  long cached = 0;  // prompt tokens the session's cache already held
  bool operator==(const TurnStats&) const = default;
};

// The context numbers of every statistics line in `err`.
std::vector<TurnStats> turn_stats(const std::string& err) {
  const std::regex stats(kStatsPattern);
  std::vector<TurnStats> turns;
  for (std::sregex_iterator it(err.begin(), err.end(), stats), end; it != end; ++it) {
    const auto& m = *it;
    turns.push_back({std::stol(m[1].str()), m[3].matched ? std::stol(m[3].str()) : 0});
  }
  return turns;
}

// Far more than 64 tokens with any vocabulary.
std::string long_text() {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "one two three four five six seven eight nine ten ";
  return text;
}

// With speculative decoding the statistics say how many of the answer's drafts the model
// confirmed. (The default model: the tiny one's float weights cannot speculate.)
TEST_F(StdioTransport, StatisticsCountTheDraftsOfSpeculativeDecoding) {
  const fs::path smollm2 = fs::path(LPX_SOURCE_DIR) / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf";
  ASSERT_TRUE(fs::exists(smollm2)) << "run tools/setup.sh";
  const fs::path path = dir / "speculative.toml";
  write_file(path, "[model]\nplugin = \"gguf\"\npath = \"" + smollm2.string() +
                       "\"\ncontext_size = 512\n[speculative]\nmode = \"ngram\"\n[backend]\nplugin = \"" +
                       backend() + "\"\n[transport]\nplugin = \"stdio\"\nmax_tokens = 40\n");
  const CommandResult r = run_lpx_with_stdin(
      {"run", "--stats", path.string()}, "Repeat exactly: red, green, blue, red, green, blue, red, green, blue.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.err, m, std::regex(kStatsPattern))) << r.err;
  ASSERT_TRUE(m[4].matched) << "no drafts counted: " << r.err;
  const long accepted = std::stol(m[4].str()), drafted = std::stol(m[5].str());
  EXPECT_GT(drafted, 0);
  EXPECT_GT(accepted, 0) << "a repeated list confirms some drafts";
  EXPECT_LE(accepted, drafted);
}

TEST_F(StdioTransport, PipedModePrintsOnlyTheAnswerAndOneNewline) {
  const CommandResult piped = run_lpx_with_stdin({"run", pipeline()}, kQuestion + "\n");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  ASSERT_FALSE(piped.out.empty());
  EXPECT_EQ(piped.out.back(), '\n');
  EXPECT_EQ(piped.out.rfind("> ", 0), std::string::npos)
      << "no prompt in piped mode: " << piped.out;
  EXPECT_EQ(piped.err.find("commands:"), std::string::npos) << "no greeting in piped mode";
  // The same question typed in a chat: stdout there is "> " ANSWER "\n" then "> " "\n" at EOF.
  // Piped stdout must be exactly that answer and its newline.
  const CommandResult chat = run_lpx_with_stdin({"run", interactive_pipeline()}, kQuestion + "\n");
  ASSERT_EQ(chat.exit_code, 0) << chat.err;
  EXPECT_EQ(chat.out, "> " + piped.out + "> \n");
}

TEST_F(StdioTransport, PipedModeIsDeterministicAndTrimsOneTrailingNewline) {
  const std::string path = pipeline();
  const CommandResult first = run_lpx_with_stdin({"run", path}, kQuestion + "\n");
  const CommandResult second = run_lpx_with_stdin({"run", path}, kQuestion);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(first.out, second.out);
}

TEST_F(StdioTransport, PipedModeWithEmptyStdinFails) {
  const CommandResult r = run_lpx_with_stdin({"run", pipeline()}, "\n");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("stdin is empty"), std::string::npos) << r.err;
}

TEST_F(StdioTransport, InteractiveResetForgetsTheConversationAndQuitExits) {
  const CommandResult r = run_lpx_with_stdin({"run", "--stats", interactive_pipeline()},
                                             "hi\n/reset\nhello\n/quit\nnever read\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("commands: /reset"), std::string::npos) << "greeting: " << r.err;
  EXPECT_NE(r.err.find("conversation reset"), std::string::npos) << r.err;
  // After /reset, "hello" is answered as in a fresh conversation (same answer, same context
  // used), and nothing is read after /quit.
  const CommandResult fresh =
      run_lpx_with_stdin({"run", "--stats", interactive_pipeline()}, "hello\n");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  const std::vector<TurnStats> turns = turn_stats(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  const std::vector<TurnStats> fresh_turns = turn_stats(fresh.err);
  ASSERT_EQ(fresh_turns.size(), 1u) << fresh.err;
  EXPECT_EQ(fresh_turns[0].cached, 0) << "a fresh process has nothing cached";
  EXPECT_EQ(turns[1].used, fresh_turns[0].used) << "the reset conversation starts anew";
  // Its session is new, but the engine's prefix cache still holds the system turn both
  // conversations start with: it maps those blocks, and the answer is the same.
  EXPECT_GT(turns[1].cached, 0) << r.err;
  ASSERT_GE(fresh.out.size(), 5u);
  const std::string hello_answer = fresh.out.substr(2, fresh.out.size() - 5);  // of "> " A "\n> \n"
  const std::string tail = "> > " + hello_answer + "> ";
  ASSERT_GE(r.out.size(), tail.size()) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - tail.size()), tail) << r.out;
}

TEST_F(StdioTransport, EndOfInputExitsZero) {
  const CommandResult r = run_lpx_with_stdin({"run", interactive_pipeline()}, "");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "> \n");
}

TEST_F(StdioTransport, EmptyLinesAreIgnored) {
  const CommandResult r = run_lpx_with_stdin({"run", interactive_pipeline()}, "\n   \n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "> > > \n");
}

TEST_F(StdioTransport, AnUnknownCommandIsReportedWithTheCommands) {
  const CommandResult r =
      run_lpx_with_stdin({"run", interactive_pipeline()}, "/frobnicate\n/quit\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("unknown command '/frobnicate'; commands: /reset"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "> > ");
}

TEST_F(StdioTransport, StatsGoToStderrOnlyWhenAsked) {
  const std::string path = pipeline();
  const CommandResult plain = run_lpx_with_stdin({"run", path}, kQuestion);
  const CommandResult flag = run_lpx_with_stdin({"run", "--stats", path}, kQuestion);
  const CommandResult option =
      run_lpx_with_stdin({"run", path, "--set", "transport.stats=true"}, kQuestion);
  for (const CommandResult* r : {&plain, &flag, &option}) ASSERT_EQ(r->exit_code, 0) << r->err;
  EXPECT_EQ(plain.err.find("[ttft"), std::string::npos) << plain.err;
  const std::regex stats(kStatsPattern);
  EXPECT_TRUE(std::regex_search(flag.err, stats)) << flag.err;
  EXPECT_TRUE(std::regex_search(option.err, stats)) << option.err;
  EXPECT_EQ(flag.out, plain.out);  // statistics never touch stdout
  EXPECT_EQ(option.out, plain.out);
}

TEST_F(StdioTransport, ASecondTurnExtendsTheConversationAndReusesItsCache) {
  const CommandResult r =
      run_lpx_with_stdin({"run", "--stats", interactive_pipeline()}, "hi\nand then?\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<TurnStats> turns = turn_stats(r.err);
  ASSERT_EQ(turns.size(), 2u) << r.err;
  EXPECT_GT(turns[1].used, turns[0].used) << "the second prompt holds the first turn: " << r.err;
  EXPECT_EQ(turns[0].cached, 0) << r.err;
  // The session kept the first turn's KV cache: most of the first prompt is not read again.
  EXPECT_GT(turns[1].cached, (turns[0].used - 8) / 2) << r.err;
}

TEST_F(StdioTransport, AFailedAnswerIsReportedAndTheChatGoesOn) {
  // 64 positions cannot hold this question: the answer fails, the chat continues.
  const std::string long_question = long_text();
  const CommandResult r =
      run_lpx_with_stdin({"run", pipeline("interactive = \"always\"\n", "context_size = 64\n")},
                         long_question + "\n/frobnicate\n/quit\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/reset"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown command '/frobnicate'"), std::string::npos) << "went on: " << r.err;
}

TEST_F(StdioTransport, AContextFullInTheMiddleOfAnAnswerIsReportedAndTheChatGoesOn) {
  // No max_tokens: the answer runs until the 80 positions are full.
  const CommandResult r =
      run_lpx_with_stdin({"run", pipeline("interactive = \"always\"\n", "context_size = 80\n", 0)},
                         "hi\n/frobnicate\n");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("error: the context is full"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/reset"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("unknown command '/frobnicate'"), std::string::npos) << "went on: " << r.err;
  EXPECT_EQ(r.out.substr(r.out.size() - 6), "\n> > \n") << "the cut answer's line is ended";
}

TEST_F(StdioTransport, AFailedAnswerInPipedModeFails) {
  const CommandResult r =
      run_lpx_with_stdin({"run", pipeline("", "context_size = 64\n")}, long_text());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("error: transport 'stdio': "), std::string::npos) << r.err;
}

TEST_F(StdioTransport, TheSystemPromptStartsTheConversation) {
  const CommandResult plain = run_lpx_with_stdin({"run", "--stats", pipeline()}, kQuestion);
  const CommandResult with_system = run_lpx_with_stdin(
      {"run", "--stats", pipeline("system_prompt = \"" + long_text() + "\"\n")}, kQuestion);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(with_system.exit_code, 0) << with_system.err;
  const auto a = turn_stats(plain.err);
  const auto b = turn_stats(with_system.err);
  ASSERT_EQ(a.size(), 1u) << plain.err;
  ASSERT_EQ(b.size(), 1u) << with_system.err;
  EXPECT_GT(b[0].used, a[0].used + 100) << "the long system prompt is in the prompt";
}

TEST_F(StdioTransport, AModelWithoutAChatTemplateFails) {
  const fs::path path = dir / "no-template.toml";
  write_file(path, "[model]\nplugin = \"gguf\"\npath = \"" + kTinyModel.string() +
                       "\"\n[backend]\nplugin = \"" + backend() +
                       "\"\n[transport]\nplugin = \"stdio\"\n");
  const CommandResult r = run_lpx_with_stdin({"run", path.string()}, kQuestion);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("has no chat template: set [model] chat_template"), std::string::npos)
      << r.err;
}

TEST_F(StdioTransport, APipelineWithoutAModelFails) {
  const fs::path path = dir / "no-model.toml";
  write_file(path, "[transport]\nplugin = \"stdio\"\n");
  const CommandResult r = run_lpx_with_stdin({"run", path.string()}, kQuestion);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("this pipeline has no model: add a [model] table"), std::string::npos)
      << r.err;
}

TEST_F(StdioTransport, CtrlCWhileWaitingForInputExitsPromptly) {
  StdinChild child({LPX_PIPELINE_BINARY, "run", interactive_pipeline()}, {{"LPX_PLUGIN_PATH", ""}});
  ASSERT_TRUE(child.wait_for_stdout("> ", std::chrono::seconds(20))) << "no prompt";
  const auto start = std::chrono::steady_clock::now();
  kill(child.pid(), SIGINT);  // stdin stays open: only request_stop can end the read
  const CommandResult r = child.wait(std::chrono::seconds(5));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(StdioTransport, CtrlCDuringAnAnswerStopsItPromptly) {
  // No max_tokens and 4096 positions: the answer would run for seconds.
  StdinChild child({LPX_PIPELINE_BINARY, "run", pipeline("interactive = \"always\"\n", "", 0)},
                   {{"LPX_PLUGIN_PATH", ""}});
  child.write_stdin("hi\n");
  ASSERT_TRUE(child.wait_for_stdout_size(3, std::chrono::seconds(20))) << "no answer";
  const auto start = std::chrono::steady_clock::now();
  kill(child.pid(), SIGINT);
  const CommandResult r = child.wait(std::chrono::seconds(5));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  EXPECT_EQ(r.out.back(), '\n') << "the stopped answer's line is ended";
}

}  // namespace
}  // namespace lpx::test
