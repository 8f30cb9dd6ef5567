/* Quantization-backend plugins: the tensor kernels of one device for the decode engine.
 *
 * The core engine owns weights, KV cache and activations and calls these kernels on them.
 * Threading: one instance is driven by one engine thread at a time; the backend may use its own
 * worker threads inside a call and must have finished with every buffer when the call returns.
 */
#ifndef LPX_KINDS_QUANT_BACKEND_H
#define LPX_KINDS_QUANT_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/kinds/tensor.h"
#include "lpx/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lpx_quant_backend_api {
  uint32_t struct_size; /* sizeof(lpx_quant_backend_api) as the plugin compiled it */

  /* since 1.0. Required. 1 when `type` can be the weight of `matmul` on this machine. */
  int32_t (*supports_type)(lpx_instance* instance, int32_t type /* lpx_tensor_type */);
  /* Required. y[b][r] = sum_c W[r][c] * x[b][c] for b < batch, where W is `weight` with
   * dims[0] = columns and dims[1] = rows; x is batch x columns f32, y is batch x rows f32, both
   * row-major, caller-owned, not aliased. Must not allocate. */
  lpx_status* (*matmul)(lpx_instance* instance, const lpx_tensor_view* weight, const float* x,
                        float* y, size_t batch);
  /* Required. Row `row` of `weight` converted to f32 into `out` (dims[0] floats). */
  lpx_status* (*dequantize_row)(lpx_instance* instance, const lpx_tensor_view* weight, int64_t row,
                                float* out);
} lpx_quant_backend_api;

#ifdef __cplusplus
}
#endif

#endif
