#include "quality/quality_prompts.hpp"

namespace lpx::core::quality {

const std::vector<QualityPrompt>& quality_prompts() {
  static const std::vector<QualityPrompt> prompts = {
      {"en", "Explain in two sentences why the sky is blue."},
      {"fr", "Écris une phrase courte sur la mer."},
      {"de", "Nenne drei Vorteile des Fahrradfahrens."},
      {"es", "¿Cuál es la capital de Argentina? Responde en una frase."},
      {"ru", "Назови три цвета радуги."},
      {"zh", "用一句话介绍长城。"},
      {"ja", "日本の首都はどこですか？一文で答えてください。"},
      {"code", "Write a Python function that returns the square of a number."},
  };
  return prompts;
}

}  // namespace lpx::core::quality
