// The grammar sampler plugin, loaded as the host loads it, on a vocabulary made for the test:
// its mask against an independent definition of the language. For `root ::= "[" [0-9]+ (","
// [0-9]+)* "]"`, a hand-written automaton says which texts are prefixes of a sentence; along
// random walks through the grammar (a random allowed token each step) every token of the
// vocabulary must be allowed exactly when appending it keeps the text such a prefix, and the
// end of generation exactly when the text is a whole sentence. Then accept/reject tables for a
// few grammars, and state reset.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"

namespace lpx::core {
namespace {

// The test vocabulary: id 0 is the end of generation (renders nothing), then single characters,
// pairs and a few longer pieces that cross the grammar's structure.
std::vector<std::string> make_pieces() {
  std::vector<std::string> pieces = {""};
  const std::string alphabet = "[],0123456789 x";
  for (char a : alphabet) pieces.push_back(std::string(1, a));
  for (char a : alphabet) {
    for (char b : std::string("[],05 ")) pieces.push_back(std::string{a, b});
  }
  for (const char* p : {"[1", "12,", ",34]", "]]", "[]", "99,1", "0]", "[[", ",,", "1, 2"}) pieces.push_back(p);
  return pieces;
}

// Where an automaton for "[" digits ("," digits)* "]" is after `text`; -1 when it failed.
int state_after(const std::string& text) {
  int s = 0;  // 0 start, 1 after '[' or ',' (a digit must follow), 2 in a number, 3 done
  for (char c : text) {
    const bool digit = c >= '0' && c <= '9';
    if (s == 0 && c == '[') s = 1;
    else if ((s == 1 || s == 2) && digit) s = 2;
    else if (s == 2 && c == ',') s = 1;
    else if (s == 2 && c == ']') s = 3;
    else return -1;
  }
  return s;
}

class GrammarLink {
 public:
  GrammarLink(HostServices& services, const std::vector<std::string>& pieces,
              const std::string& grammar, const std::string& format = "gbnf") {
    instance_ = test::create_builtin(services, "grammar", {{"grammar", grammar}, {"format", format}});
    api_ = &instance_->api<lpx_sampler_api>();
    std::vector<const char*> data;
    std::vector<std::uint32_t> lengths;
    for (const std::string& p : pieces) {
      data.push_back(p.data());
      lengths.push_back(static_cast<std::uint32_t>(p.size()));
    }
    const std::int32_t end = 0;
    lpx_vocabulary v{sizeof(lpx_vocabulary), static_cast<std::uint32_t>(pieces.size()), data.data(),
                     lengths.data(), &end, 1, 12345};
    if (lpx_status* s = api_->bind_vocabulary(instance_->raw(), &v)) {
      throw std::runtime_error(take_status_message(s));
    }
    n_ = pieces.size();
    if (lpx_status* s = api_->state_create(instance_->raw(), 1, &state_)) {
      throw std::runtime_error(take_status_message(s));
    }
  }
  ~GrammarLink() { api_->state_destroy(state_); }

  // The ids the link allows now (in id order).
  std::vector<std::int32_t> allowed() {
    std::vector<lpx_token_candidate> c;
    for (std::size_t i = 0; i < n_; ++i) c.push_back({static_cast<std::int32_t>(i), 0.0f, 0.0f});
    lpx_candidates view{c.data(), c.size(), -1, 0, 0, 0};
    if (lpx_status* s = api_->apply(instance_->raw(), state_, &view)) {
      throw std::runtime_error(take_status_message(s));
    }
    std::vector<std::int32_t> ids;
    for (std::size_t i = 0; i < view.size; ++i) ids.push_back(c[i].id);
    return ids;
  }
  void accept(std::int32_t token) { api_->accept(instance_->raw(), state_, token); }
  void reset() { api_->reset(instance_->raw(), state_); }

 private:
  std::shared_ptr<PluginInstance> instance_;
  const lpx_sampler_api* api_ = nullptr;
  lpx_sampler_state* state_ = nullptr;
  std::size_t n_ = 0;
};

class GrammarSampler : public ::testing::Test {
 protected:
  MetricsRegistry metrics;
  HostServices services{metrics};
  const std::vector<std::string> pieces = make_pieces();
};

TEST_F(GrammarSampler, EveryAllowedTokenKeepsAValidPrefixAndEveryOtherBreaksIt) {
  GrammarLink link(services, pieces, R"(root ::= "[" [0-9]+ ("," [0-9]+)* "]")");
  std::mt19937 rng(7);
  int walks_completed = 0;
  for (int walk = 0; walk < 60; ++walk) {
    link.reset();
    std::string text;
    for (int step = 0; step < 40; ++step) {
      const std::vector<std::int32_t> allowed = link.allowed();
      std::vector<bool> is_allowed(pieces.size(), false);
      for (std::int32_t id : allowed) is_allowed[static_cast<std::size_t>(id)] = true;
      for (std::size_t id = 1; id < pieces.size(); ++id) {
        const bool keeps_prefix = state_after(text + pieces[id]) >= 0;
        ASSERT_EQ(is_allowed[id], keeps_prefix)
            << "after '" << text << "', token '" << pieces[id] << "'";
      }
      const bool complete = state_after(text) == 3;
      ASSERT_EQ(is_allowed[0], complete) << "end of generation after '" << text << "'";
      ASSERT_FALSE(allowed.empty());
      const std::int32_t pick = allowed[std::uniform_int_distribution<std::size_t>(0, allowed.size() - 1)(rng)];
      link.accept(pick);
      if (pick == 0) {
        ++walks_completed;
        break;
      }
      text += pieces[static_cast<std::size_t>(pick)];
    }
  }
  EXPECT_GT(walks_completed, 5) << "the walks should reach whole sentences";
}

// Accept and reject tables: a text is accepted when it can be produced token by token (its
// characters, one at a time) and then end.
bool accepts(GrammarLink& link, const std::vector<std::string>& pieces, const std::string& text) {
  link.reset();
  for (char c : text) {
    const auto it = std::find(pieces.begin(), pieces.end(), std::string(1, c));
    if (it == pieces.end()) return false;
    const auto id = static_cast<std::int32_t>(it - pieces.begin());
    const std::vector<std::int32_t> allowed = link.allowed();
    if (std::find(allowed.begin(), allowed.end(), id) == allowed.end()) return false;
    link.accept(id);
  }
  const std::vector<std::int32_t> allowed = link.allowed();
  return std::find(allowed.begin(), allowed.end(), 0) != allowed.end();
}

TEST_F(GrammarSampler, AcceptsAndRejectsAsTheGrammarSays) {
  const struct {
    const char* grammar;
    const char* format;
    std::vector<std::string> accepted, rejected;
  } tables[] = {
      {R"(root ::= "[" [0-9]+ ("," [0-9]+)* "]")", "gbnf",
       {"[0]", "[12,3]", "[1,2,3,4]"}, {"[]", "[1,]", "[1", "1]", "[x]", "[1 ,2]"}},
      {R"(root ::= item{2,3}
          item ::= [0-9] " ")", "gbnf", {"1 2 ", "1 2 3 "}, {"1 ", "1 2 3 4 ", "12 "}},
      {R"({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 9}, "maxItems": 2})",
       "json_schema", {"[]", "[5]", "[0, 9]"}, {"[10]", "[1, 2, 3]", "[-1]", "[5,]"}},
  };
  for (const auto& t : tables) {
    GrammarLink link(services, pieces, t.grammar, t.format);
    for (const std::string& text : t.accepted) EXPECT_TRUE(accepts(link, pieces, text)) << t.grammar << " " << text;
    for (const std::string& text : t.rejected) EXPECT_FALSE(accepts(link, pieces, text)) << t.grammar << " " << text;
  }
}

}  // namespace
}  // namespace lpx::core
