/* Tensor element types and read-only tensor views, shared by model formats and backends. */
#ifndef LPX_KINDS_TENSOR_H
#define LPX_KINDS_TENSOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types. Block-quantized types follow the block layouts of the GGUF ecosystem. */
typedef enum lpx_tensor_type {
  LPX_TENSOR_F32 = 1,
  LPX_TENSOR_F16 = 2,
  LPX_TENSOR_BF16 = 3,
  LPX_TENSOR_Q8_0 = 4,
  LPX_TENSOR_Q4_0 = 5,
  LPX_TENSOR_Q4_1 = 6,
  LPX_TENSOR_Q5_0 = 7,
  LPX_TENSOR_Q5_1 = 8,
  LPX_TENSOR_Q4_K = 9,
  LPX_TENSOR_Q5_K = 10,
  LPX_TENSOR_Q6_K = 11,
  LPX_TENSOR_Q8_K = 12
} lpx_tensor_type;

#define LPX_TENSOR_MAX_DIMS 4

/* A tensor inside a model. dims[0] is the innermost (contiguous) dimension. `data` points into
 * memory owned by the lpx_model it came from and lives until that model is closed. */
typedef struct lpx_tensor_view {
  const char* name; /* UTF-8, owned by the model */
  int32_t type; /* an lpx_tensor_type */
  uint32_t n_dims;
  int64_t dims[LPX_TENSOR_MAX_DIMS];
  const void* data;
  uint64_t size_bytes;
} lpx_tensor_view;

#ifdef __cplusplus
}
#endif

#endif
