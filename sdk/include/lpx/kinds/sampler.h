/* Sampler plugins: turn next-token logits into a choice.
 *
 * A sampler transforms a candidate list in place (temperature, top-k, penalties...) and may select a
 * token. A chain of samplers is itself a sampler: each link transforms the same list in turn, the
 * last one selects. Per-sequence memory (RNG, penalty history) lives in an lpx_sampler_state, so
 * one instance serves many sequences.
 *
 * Threading: an instance is shared and immutable once created and, where the host binds a
 * vocabulary (2.1), bound (before it is shared); calls with different states may run
 * concurrently; calls on one state are never concurrent. `apply` is on the decode hot path: it must
 * not allocate (use the state) and must not block.
 */
#ifndef LPX_KINDS_SAMPLER_H
#define LPX_KINDS_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/kinds/sampling_program.h"
#include "lpx/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lpx_token_candidate {
  int32_t id;    /* token id */
  float logit;   /* raw or transformed logit */
  float p;       /* probability, meaningful only when lpx_candidates.has_probabilities */
} lpx_token_candidate;

/* A view of the candidates of one sequence for one step. Memory owned by the caller, valid during
 * the call. A sampler may shrink `size` (truncation), reorder `data` (then set or clear `sorted`),
 * rewrite logits, and set `selected`. */
typedef struct lpx_candidates {
  lpx_token_candidate* data;
  size_t size;
  int64_t selected;          /* index into data of the chosen token, or -1 */
  int32_t sorted;            /* 1 when data is sorted by descending logit */
  int32_t has_probabilities; /* 1 when every p is the softmax of the current logits */
  /* since 2.2. Tokens the sequence may still generate, the one being picked and an end of
   * generation included (what max_tokens and the context leave); 0: unknown. A grammar uses it
   * to close its text while it still fits. Read-only. */
  uint32_t tokens_left;
} lpx_candidates;

typedef struct lpx_sampler_state lpx_sampler_state; /* opaque, plugin-owned */

/* since 2.1. What each token of the model's vocabulary stands for, for links that reason about
 * text (a grammar). Token i's bytes are pieces[i][0 .. piece_lengths[i]) as the detokenizer
 * emits them (raw bytes, not necessarily whole UTF-8 characters); a token that renders no text
 * (control tokens, unknown) has length 0. end_of_generation lists the tokens that end a
 * generation. Everything is host-owned and valid during bind_vocabulary only: copy what you
 * keep. */
typedef struct lpx_vocabulary {
  uint32_t struct_size;
  uint32_t n_vocab;
  const char* const* pieces;    /* n_vocab pointers (a length-0 piece may be NULL) */
  const uint32_t* piece_lengths;
  const int32_t* end_of_generation;
  uint32_t end_of_generation_count;
  uint64_t fingerprint;         /* equal for equal vocabularies: a key for caches */
} lpx_vocabulary;

typedef struct lpx_sampler_api {
  uint32_t struct_size; /* sizeof(lpx_sampler_api) as the plugin compiled it */

  /* since 1.0. Optional (NULL = stateless; the host passes a NULL state). Makes the state of one
   * sequence; `seed` seeds any randomness (same seed, same choices). */
  lpx_status* (*state_create)(lpx_instance* instance, uint64_t seed, lpx_sampler_state** out_state);
  /* Optional; required when state_create is set. */
  void (*state_destroy)(lpx_sampler_state* state);

  /* Required. Transform and/or select on `candidates`. */
  lpx_status* (*apply)(lpx_instance* instance, lpx_sampler_state* state,
                       lpx_candidates* candidates);
  /* Optional. Tell the state which token the sequence finally took (for penalties). */
  void (*accept)(lpx_instance* instance, lpx_sampler_state* state, int32_t token);
  /* Optional. Forget the history of the state, keep its seed. */
  void (*reset)(lpx_instance* instance, lpx_sampler_state* state);

  /* since 1.5. Optional. Returns 1 and fills `op` when `apply` is exactly that standard
   * operation (sampling_program.h) whatever the candidates, so a host may run this link as part
   * of a sampling program next to the logits (on a GPU); 0 otherwise. Must not depend on a
   * state: a sequence's program is built once. Such a link's accept must not change its later
   * draws: a host queuing steps (quant_backend.h, since 2.8) draws step N + 1's uniform before
   * it accepts step N's token. */
  int32_t (*standard_op)(lpx_instance* instance, lpx_sampling_op* op);
  /* Optional; for links whose standard_op is LPX_SAMPLING_DIST. Advances `state` exactly as
   * one `apply` would and returns the uniform in [0, 1) that `apply` would have drawn, for the
   * sampling program that runs in its place. */
  double (*draw_uniform)(lpx_instance* instance, lpx_sampler_state* state);

  /* since 2.1. Optional. The vocabulary of the model the link will sample for, given once by the
   * host after create and before any state_create or apply (an instance serves one
   * vocabulary). A failure (say, a grammar no token sequence can satisfy) refuses the link. */
  lpx_status* (*bind_vocabulary)(lpx_instance* instance, const lpx_vocabulary* vocabulary);
} lpx_sampler_api;

#ifdef __cplusplus
}
#endif

#endif
