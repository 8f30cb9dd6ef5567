/* The decode engine as transports see it (since ABI 1.2).
 *
 * A transport receives an lpx_engine and its function table in lpx_run_context. It submits
 * requests; the engine runs them on its own thread, batching every active request into each
 * decode step (continuous batching), and reports progress through the request's callbacks.
 *
 * Threading: every function here is thread-safe. Callbacks run on the engine thread, one request
 * at a time; they must return quickly and must not call `wait` (they may call `cancel`).
 * Lifetime: the engine and its table live from the start of the transport's `run` until it
 * returns; every request has finished (on_done called) before `run` may return.
 */
#ifndef LPX_ENGINE_H
#define LPX_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lpx_engine lpx_engine; /* opaque, host-owned */

/* One chat message. Strings are UTF-8, NUL-terminated, caller-owned, read during submit only. */
typedef struct lpx_chat_message {
  const char* role; /* "system", "user", "assistant", ... */
  const char* content;
} lpx_chat_message;

/* Which fields of lpx_sampling_overrides are set. */
#define LPX_SET_TEMPERATURE 0x001u
#define LPX_SET_TOP_K 0x002u
#define LPX_SET_TOP_P 0x004u
#define LPX_SET_MIN_P 0x008u
#define LPX_SET_REPEAT_PENALTY 0x010u
#define LPX_SET_PRESENCE_PENALTY 0x020u
#define LPX_SET_FREQUENCY_PENALTY 0x040u
#define LPX_SET_PENALTY_LAST_N 0x080u
#define LPX_SET_SEED 0x100u
#define LPX_SET_GRAMMAR 0x200u /* since 2.1 */

/* since 2.1. What lpx_sampling_overrides.grammar holds. */
typedef enum lpx_grammar_kind {
  LPX_GRAMMAR_GBNF = 1,        /* a GBNF grammar, root rule `root` (docs/structured-output.md) */
  LPX_GRAMMAR_JSON_SCHEMA = 2, /* a JSON Schema (UTF-8 JSON text) the output must validate against */
  /* since 2.2. A structural tag (JSON): text shapes composed of constant strings, tags around
   * JSON Schemas and grammars, sequences, alternatives and triggered tags, in the format
   * xgrammar defines and vLLM and SGLang accept (docs/structured-output.md). Tool calls are
   * held to their functions' schemas with it. */
  LPX_GRAMMAR_STRUCTURAL_TAG = 3
} lpx_grammar_kind;

/* Per-request changes to the pipeline's sampler chain. A set field overrides the option of the
 * same name on the chain's link that has it; a field no link has adds the standard link for it
 * (temperature 0 means greedy). Caller-owned, read during submit only. */
typedef struct lpx_sampling_overrides {
  uint32_t struct_size;
  uint32_t set; /* LPX_SET_* bits */
  double temperature;
  int64_t top_k;
  double top_p;
  double min_p;
  double repeat_penalty;
  double presence_penalty;
  double frequency_penalty;
  int64_t penalty_last_n;
  uint64_t seed;
  /* Added to the logits of these tokens before any sampler runs; -INFINITY bans a token. */
  const int32_t* logit_bias_tokens;
  const float* logit_bias_values;
  size_t logit_bias_count;
  /* since 2.1, with LPX_SET_GRAMMAR: every generated token keeps the output a prefix of a text
   * the grammar accepts, and generation ends only where it is complete (the `grammar` link runs
   * first in the chain). UTF-8, NUL-terminated, read during submit only. */
  const char* grammar;
  int32_t grammar_kind; /* an lpx_grammar_kind */
} lpx_sampling_overrides;

typedef enum lpx_finish_reason {
  LPX_FINISH_LENGTH = 1,    /* max_tokens generated */
  LPX_FINISH_EOG = 2,       /* the model's end-of-generation token */
  LPX_FINISH_STOP = 3,      /* a stop string; the text before it was delivered */
  LPX_FINISH_CANCELLED = 4, /* cancel, or on_token returned nonzero */
  LPX_FINISH_ERROR = 5      /* see lpx_request_result.error */
} lpx_finish_reason;

/* A token with its log-probability (since 1.3). `piece` is the token's own text as bytes (it may
 * be part of a UTF-8 character); not NUL-terminated; valid during the callback. */
typedef struct lpx_token_logprob {
  int32_t token;
  float logprob; /* natural log of the model's probability, <= 0 */
  const char* piece;
  size_t piece_length;
} lpx_token_logprob;

/* Streamed output, once per generated token (the end-of-generation token included) and once more
 * with token -1 if text was still held back when the request ended. `text` is what became
 * showable with this token (possibly empty): whole UTF-8 characters only (byte tokens that form
 * no character become U+FFFD), never a special token's text or any part of a (possible) stop
 * string. Valid during the call. */
typedef struct lpx_token_event {
  uint32_t struct_size;
  const char* text; /* not NUL-terminated */
  size_t text_length;
  int32_t token;    /* the token that completed this piece */
  uint32_t index;   /* 0-based index of the token among the generated ones */
  /* since 1.3. Only when the request asked for log-probabilities, else NULL / 0 (and always for
   * the final flush, token -1). Log-probabilities are those of the model's distribution: the
   * log-softmax of its logits, before logit bias, penalties, temperature or any filter. Arrays
   * are engine-owned and valid during the callback. */
  const lpx_token_logprob* chosen;      /* the token above */
  const lpx_token_logprob* top;         /* the most likely tokens, most likely first */
  uint32_t top_count;                   /* = the request's top_logprobs */
} lpx_token_event;

/* How a request ended. Valid during on_done only. */
typedef struct lpx_request_result {
  uint32_t struct_size;
  int32_t finish_reason;      /* an lpx_finish_reason */
  const lpx_status* error;    /* FINISH_ERROR: what went wrong (host-owned); else NULL */
  uint32_t prompt_tokens;     /* tokens of the prompt */
  uint32_t cached_tokens;     /* prompt tokens reused from the session's cache */
  uint32_t completion_tokens; /* tokens generated, the end-of-generation token included */
  uint32_t context_size;      /* the engine's per-sequence limit, for "tokens used" displays */
  double time_to_first_token_ms;
  double decode_tokens_per_second; /* generated tokens after the first, per second */
  double total_ms;
  /* since 2.3 (read only when struct_size covers them): speculative decoding. Tokens drafted
   * for this request and verified by the model, and of those the ones it confirmed (each
   * confirmed draft is a generated token that took no step of its own). 0 without speculation. */
  uint32_t draft_tokens;
  uint32_t accepted_draft_tokens;
  /* since 2.4 (read only when struct_size covers it): milliseconds from submission until the
   * request was admitted to a sequence slot (until it ended, if it never was); part of
   * time_to_first_token_ms. */
  double queue_ms;
} lpx_request_result;

typedef struct lpx_request {
  uint32_t struct_size;
  /* Exactly one of: `prompt` (UTF-8 text, tokenized as the model says, BOS included when the
   * model wants one; special-token text stays text), `messages` (rendered with the model's chat
   * template plus the assistant generation prompt; special tokens in the rendering are parsed)
   * or `prompt_tokens` (token ids, used as given). */
  const char* prompt;
  const lpx_chat_message* messages;
  size_t message_count;
  const int32_t* prompt_tokens;
  size_t prompt_token_count;
  uint32_t max_tokens; /* 0: until end of generation or the context is full (then an error) */
  const char* const* stop; /* stop strings, UTF-8; caller-owned, read during submit only */
  size_t stop_count;
  const lpx_sampling_overrides* sampling; /* NULL: the pipeline's chain as configured */
  /* 0, or a session from session_create: the engine keeps the session's KV cache between
   * requests and reuses the longest common token prefix (multi-turn chat). One request per
   * session at a time. */
  uint64_t session;

  void* user; /* passed to the callbacks */
  /* Optional. Return 0 to go on, nonzero to cancel the request. */
  int32_t (*on_token)(void* user, const lpx_token_event* event);
  /* Required. Called exactly once when the request ends, however it ends. */
  void (*on_done)(void* user, const lpx_request_result* result);

  /* since 1.3 (a 1.2-sized request has none of these: they read as 0) */
  int32_t logprobs;      /* nonzero: report each chosen token's log-probability */
  uint32_t top_logprobs; /* and this many most likely alternatives, at most LPX_MAX_TOP_LOGPROBS */
  uint32_t flags;        /* LPX_REQUEST_* */

  /* since 2.1. In place of `messages`: the conversation as a JSON array (UTF-8) of chat
   * messages as OpenAI writes them: `role`, `content` (a string, null, or an array of text
   * parts), and what a template renders of tool use (an assistant's `tool_calls`, each
   * {"id", "type", "function": {"name", "arguments"}} with the arguments as a JSON object; a
   * tool message's `tool_call_id` and `name`). Read during submit only. */
  const char* messages_json;
  /* since 2.1. Optional, with `messages` or `messages_json`: the tools offered to the model, a
   * JSON array of OpenAI tool definitions ({"type": "function", "function": {"name",
   * "description", "parameters"}}), rendered by the chat template (its `tools`). A template that
   * renders no tools refuses the request (LPX_ERR_UNSUPPORTED, field "tools"). */
  const char* tools_json;

  /* since 2.7. The name of a LoRA adapter loaded beside the model ([model] adapters) that this
   * request runs with; NULL or "": the model alone. One batch may mix adapters. An unknown name
   * is refused (LPX_ERR_NOT_FOUND, field "model"). A transport takes it from its model lease
   * (lpx_model_lease.adapter). Read during submit only. */
  const char* adapter;
} lpx_request;

#define LPX_MAX_TOP_LOGPROBS 20
/* When the context fills before max_tokens (or max_tokens is 0), finish with LPX_FINISH_LENGTH
 * instead of an error: for APIs where "the answer was cut off" is a normal outcome. */
#define LPX_REQUEST_CONTEXT_END_IS_LENGTH 0x1u
/* since 1.4. End-of-generation tokens do not end the request: it runs to max_tokens, like
 * llama-bench's tg tests (benchmarks that must decode an exact number of tokens). */
#define LPX_REQUEST_IGNORE_END_OF_GENERATION 0x2u
/* since 2.1. The texts of special tokens in `prompt` become those tokens ("<|im_start|>" is one
 * token, not seven), as llama-server and vLLM read completion prompts. Without it they are
 * plain text. Chat messages are always rendered with their special tokens. */
#define LPX_REQUEST_PARSE_SPECIAL 0x4u

typedef struct lpx_engine_info {
  uint32_t struct_size;
  const char* model_name;   /* general.name or the file stem; host-owned, lives with the engine */
  const char* model_path;
  uint32_t context_size;    /* positions per sequence */
  uint32_t max_sequences;   /* sequences decoded together */
  int32_t has_chat_template;
  /* since 1.3 (filled when struct_size covers it) */
  const char* backend;      /* the quant_backend plugin's name, e.g. "cpu" */
  /* since 2.2 (filled when struct_size covers it): the source of the chat template that renders
   * `messages`, NULL when the engine has none. Host-owned, lives with the engine. An API reads
   * from it the syntax in which the model calls tools. */
  const char* chat_template;
} lpx_engine_info;

/* A snapshot of the engine's load (since 1.3), for metrics and admission decisions. */
typedef struct lpx_engine_stats {
  uint32_t struct_size;
  uint32_t waiting_requests;  /* submitted, not yet admitted */
  uint32_t running_requests;  /* admitted: prefilling or decoding */
  uint32_t kv_block_size;     /* positions per KV block */
  uint32_t kv_blocks_total;
  uint32_t kv_blocks_used;    /* by running requests and idle sessions' cached prefixes */
  uint64_t prompt_tokens;     /* prompt tokens computed since start (cache hits excluded) */
  uint64_t generated_tokens;  /* tokens generated since start */
  uint64_t steps;             /* forward passes since start */
  /* since 2.2 (filled when struct_size covers them): automatic prefix caching, in KV blocks of
   * kv_block_size positions. Hits are prompt blocks mapped from the cache instead of computed,
   * misses full prompt blocks looked up and not found; evictions are cached blocks taken back
   * for other sequences; cached blocks are those indexed now (held or idle). Idle cached blocks
   * count as free in kv_blocks_used. */
  uint64_t prefix_cache_hits;
  uint64_t prefix_cache_misses;
  uint64_t prefix_cache_evictions;
  uint32_t prefix_cache_blocks;
  /* since 2.2: speculative decoding. Tokens drafted and verified, and of those the ones the
   * model confirmed (each an extra token of a step); their ratio is the acceptance. */
  uint64_t spec_draft_tokens;
  uint64_t spec_accepted_tokens;
  /* since 2.8: steps a device ran queued behind the step before, without waiting for the host
   * (quant_backend.h, model_enqueue; [engine] overlap_steps). */
  uint64_t steps_queued_behind;
} lpx_engine_stats;

/* Flags of tokenize / detokenize (since 1.3). */
#define LPX_TOKENIZE_ADD_SPECIAL 0x1u   /* add BOS/EOS as the model's vocabulary says */
#define LPX_TOKENIZE_PARSE_SPECIAL 0x2u /* special-token text ("<|im_end|>") becomes the token */
#define LPX_DETOKENIZE_RENDER_SPECIAL 0x1u /* write special tokens' text instead of nothing */

typedef struct lpx_engine_api {
  uint32_t struct_size; /* sizeof(lpx_engine_api) as the host compiled it */

  /* since 1.2 */
  void (*info)(lpx_engine* engine, lpx_engine_info* out_info);
  /* Validates and queues a request (an invalid one fails here, and then on_done is never
   * called). *out_id identifies it for cancel/wait. */
  lpx_status* (*submit)(lpx_engine* engine, const lpx_request* request, uint64_t* out_id);
  /* Asks a request to stop; it ends with LPX_FINISH_CANCELLED. Unknown ids are ignored. */
  void (*cancel)(lpx_engine* engine, uint64_t request_id);
  /* Blocks until the request's on_done has returned. Not from a callback. */
  void (*wait)(lpx_engine* engine, uint64_t request_id);
  lpx_status* (*session_create)(lpx_engine* engine, uint64_t* out_session);
  /* Frees the session's cache. Its request, if any, is cancelled first. */
  void (*session_destroy)(lpx_engine* engine, uint64_t session);

  /* since 1.3 */
  void (*stats)(lpx_engine* engine, lpx_engine_stats* out_stats);
  /* Text (UTF-8, `length` bytes) to token ids. Writes at most `capacity` ids to `out_tokens`
   * and always sets *out_count to the full count: call again with a larger buffer when it
   * exceeds capacity. Invalid UTF-8 is an error. */
  lpx_status* (*tokenize)(lpx_engine* engine, const char* text, size_t length, uint32_t flags,
                          int32_t* out_tokens, size_t capacity, size_t* out_count);
  /* Token ids to UTF-8 text (invalid byte sequences become U+FFFD), same buffer protocol in
   * bytes; no NUL is written. An id outside the vocabulary is an error naming it. */
  lpx_status* (*detokenize)(lpx_engine* engine, const int32_t* tokens, size_t count,
                            uint32_t flags, char* out_text, size_t capacity, size_t* out_length);
} lpx_engine_api;

#ifdef __cplusplus
}
#endif

#endif
