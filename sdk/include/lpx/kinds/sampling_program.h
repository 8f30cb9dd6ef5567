/* Sampling programs (since ABI 1.5): a sampler chain in a form a device can run next to the
 * logits, so that only the chosen token id crosses to the host.
 *
 * A program is a short list of standard operations applied in order to the candidate list of
 * one row, exactly as the standard sampler plugins of the same names apply them (sampler.h):
 * the candidates start as every token with its raw logit, ordered by descending logit, equal
 * logits by ascending id; every filter keeps a prefix of that order; softmax is computed in
 * double from the current (scaled) logits of the current candidates. The last operation, and
 * only the last, selects.
 *
 * A sampler link describes itself as one operation through lpx_sampler_api.standard_op; a
 * chain of such links (no logit bias) is one program. A device that runs programs declares the
 * backend capability "device-sampling" and reads lpx_forward_args.sampling.
 */
#ifndef LPX_KINDS_SAMPLING_PROGRAM_H
#define LPX_KINDS_SAMPLING_PROGRAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lpx_sampling_op_kind {
  /* value = T. T > 0 divides the logits by T; T = 0 keeps only the first candidate. */
  LPX_SAMPLING_TEMPERATURE = 1,
  /* count = k. Keeps the first k candidates; k = 0 keeps all. */
  LPX_SAMPLING_TOP_K = 2,
  /* value = p, count = min_keep. p >= 1 keeps all; otherwise keeps the first i + 1 candidates
   * where i is the first index at which the running sum of the softmax probabilities (each
   * rounded to float, summed in double) reaches p and i + 1 >= min_keep; all if none does. */
  LPX_SAMPLING_TOP_P = 3,
  /* value = p, count = min_keep. p <= 0 keeps all; otherwise keeps the candidates whose logit
   * is >= the first one's + log(p) (in double), and at least min(min_keep, size) of them. */
  LPX_SAMPLING_MIN_P = 4,
  /* Selects the first candidate. */
  LPX_SAMPLING_GREEDY = 5,
  /* Selects by probability: target = uniform * (sum of the softmax probabilities, each rounded
   * to float, in double); the first candidate whose running sum exceeds target, else the last.
   * `uniform` is the program's. */
  LPX_SAMPLING_DIST = 6
} lpx_sampling_op_kind;

typedef struct lpx_sampling_op {
  uint32_t kind;  /* lpx_sampling_op_kind */
  uint32_t count; /* k or min_keep; 0 where unused */
  double value;   /* T or p; 0 where unused */
} lpx_sampling_op;

#define LPX_SAMPLING_MAX_OPS 8

typedef struct lpx_sampling_program {
  uint32_t n_ops; /* 1 .. LPX_SAMPLING_MAX_OPS; ops[n_ops - 1] selects, no other op does */
  uint32_t reserved;
  double uniform; /* in [0, 1): the draw LPX_SAMPLING_DIST uses for this row and step */
  lpx_sampling_op ops[LPX_SAMPLING_MAX_OPS];
} lpx_sampling_program;

#ifdef __cplusplus
}
#endif

#endif
