// The quality tool's detectors on crafted answers: each fault is found where it is and only there.
#include <gtest/gtest.h>

#include "quality/answer_checks.hpp"

namespace lpx::test {
namespace {

using core::quality::Answer;
using core::quality::check_answer;
using core::quality::ends_in_loop;
using core::quality::ends_naturally;

const std::vector<std::string> kSpecials = {"<|im_end|>", "<|endoftext|>"};

Answer answer(std::string text, bool ended_by_model = true, std::vector<std::int32_t> tokens = {1, 2, 3}) {
  return Answer{std::move(text), std::move(tokens), ended_by_model};
}

TEST(AnswerChecks, AGoodAnswerHasNoFault) {
  const auto f = check_answer(answer("The sky is blue because of Rayleigh scattering."), kSpecials);
  EXPECT_FALSE(f.empty || f.bad_utf8 || f.special_leak || f.early_stop || f.loop);
}

TEST(AnswerChecks, FindsEmptyAnswers) {
  EXPECT_TRUE(check_answer(answer(""), kSpecials).empty);
  EXPECT_TRUE(check_answer(answer(" \n\t "), kSpecials).empty);
  EXPECT_FALSE(check_answer(answer(" ok."), kSpecials).empty);
  EXPECT_FALSE(check_answer(answer(""), kSpecials).early_stop) << "an empty answer is counted once, as empty";
}

TEST(AnswerChecks, FindsBrokenUtf8AndReplacementCharacters) {
  EXPECT_TRUE(check_answer(answer("caf\xC3"), kSpecials).bad_utf8);           // cut inside é
  EXPECT_TRUE(check_answer(answer("\xC0\xAF."), kSpecials).bad_utf8);         // overlong
  EXPECT_TRUE(check_answer(answer("mot \xEF\xBF\xBD."), kSpecials).bad_utf8);  // U+FFFD
  EXPECT_FALSE(check_answer(answer("日本の首都は東京です。"), kSpecials).bad_utf8);
}

TEST(AnswerChecks, FindsSpecialTokensInTheText) {
  EXPECT_TRUE(check_answer(answer("Paris.<|im_end|>"), kSpecials).special_leak);
  EXPECT_TRUE(check_answer(answer("<|endoftext|>Paris."), kSpecials).special_leak);
  EXPECT_FALSE(check_answer(answer("Paris. <|im_start|> is another token"), kSpecials).special_leak);
}

TEST(AnswerChecks, AnAnswerTheModelEndsMidSentenceStoppedEarly) {
  EXPECT_TRUE(check_answer(answer("The capital of Argentina is"), kSpecials).early_stop);
  EXPECT_TRUE(check_answer(answer("Il fait beau et"), kSpecials).early_stop);
  // Cut by max_tokens is not the model stopping.
  EXPECT_FALSE(check_answer(answer("The capital of Argentina is", false), kSpecials).early_stop);
}

TEST(AnswerChecks, NaturalEndsInEveryScript) {
  for (const char* text : {"Done.", "Really?", "Yes!", "(see above)", "\"quoted\"", "a list:\n", "```",
                           "東京です。", "はい！", "Вот так…", "«Да»", "هل هذا صحيح؟", "यह है।", "Nice 🎉",
                           "**bold**", "done.  "}) {
    EXPECT_TRUE(ends_naturally(text)) << text;
  }
  for (const char* text : {"and then", "Der Himmel ist", "東京", "", "   "}) {
    EXPECT_FALSE(ends_naturally(text)) << text;
  }
}

TEST(AnswerChecks, FindsAnswersThatEndInALoop) {
  std::vector<std::int32_t> looping = {5, 6, 7};
  for (int i = 0; i < 10; ++i) looping.insert(looping.end(), {1, 2, 3});  // 30 tokens of "1 2 3"
  EXPECT_TRUE(ends_in_loop(looping));
  EXPECT_TRUE(ends_in_loop(std::vector<std::int32_t>(30, 9)));  // one token over and over
  // Three copies of a short block are a pattern, not a loop; a loop that stopped is not one at the end.
  EXPECT_FALSE(ends_in_loop({1, 2, 3, 1, 2, 3, 1, 2, 3}));
  std::vector<std::int32_t> recovered = looping;
  recovered.insert(recovered.end(), {8, 9, 10, 11});
  EXPECT_FALSE(ends_in_loop(recovered));
  std::vector<std::int32_t> varied(200);
  for (std::size_t i = 0; i < varied.size(); ++i) varied[i] = static_cast<std::int32_t>(i * 7 % 101);
  EXPECT_FALSE(ends_in_loop(varied));
  EXPECT_TRUE(check_answer(answer("la la la", false, looping), kSpecials).loop);
}

}  // namespace
}  // namespace lpx::test
