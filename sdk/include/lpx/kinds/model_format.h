/* Model-format plugins: open a model file and expose its metadata and tensors.
 *
 * A model is one file or, for formats that say so through probe_path, a directory.
 *
 * Metadata keys follow the GGUF naming conventions ("general.architecture", "llama.block_count",
 * "tokenizer.ggml.tokens", "tokenizer.chat_template"); a plugin for another format maps its own
 * fields onto them, so the core interprets one vocabulary of keys.
 *
 * Threading: `open` may run concurrently with itself. Everything on one lpx_model is read-only after
 * open and may be called from any thread.
 */
#ifndef LPX_KINDS_MODEL_FORMAT_H
#define LPX_KINDS_MODEL_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/kinds/tensor.h"
#include "lpx/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lpx_model lpx_model; /* opaque, plugin-owned, from open until close */

typedef enum lpx_value_type {
  LPX_VALUE_UINT = 1,   /* any unsigned integer width, widened */
  LPX_VALUE_INT = 2,    /* any signed integer width, widened */
  LPX_VALUE_FLOAT = 3,  /* f32 or f64, widened */
  LPX_VALUE_BOOL = 4,
  LPX_VALUE_STRING = 5,
  LPX_VALUE_ARRAY = 6
} lpx_value_type;

/* A metadata value. Pointers are owned by the model and live until close. */
typedef struct lpx_metadata_value {
  int32_t type;        /* an lpx_value_type */
  uint64_t u;          /* UINT, BOOL (0/1) */
  int64_t i;           /* INT */
  double f;            /* FLOAT */
  const char* string;  /* STRING: UTF-8, not necessarily NUL-terminated */
  uint64_t length;     /* STRING: bytes; ARRAY: element count */
  int32_t element_type; /* ARRAY: lpx_value_type of the elements; see metadata_array_at */
} lpx_metadata_value;

typedef struct lpx_model_format_api {
  uint32_t struct_size; /* sizeof(lpx_model_format_api) as the plugin compiled it */

  /* since 1.0. Required. How confident the plugin is that `head` (the first bytes of a file, at
   * most 4096) is its format: 0 = not mine, 100 = certain. Pure function. */
  int32_t (*probe)(lpx_instance* instance, const uint8_t* head, size_t length);
  /* Required. Open and fully validate `path` (UTF-8). The file is untrusted input. */
  lpx_status* (*open)(lpx_instance* instance, const char* path, lpx_model** out_model);
  /* Required. Invalidates every view obtained from the model. */
  void (*close)(lpx_model* model);

  /* Required. Look a metadata key up. LPX_ERR_NOT_FOUND when absent. */
  lpx_status* (*metadata_find)(const lpx_model* model, const char* key,
                               lpx_metadata_value* out_value);
  /* Required. Element `index` of the array under `key`. */
  lpx_status* (*metadata_array_at)(const lpx_model* model, const char* key, uint64_t index,
                                   lpx_metadata_value* out_value);
  /* Required. Tensors, by index in file order. */
  uint64_t (*tensor_count)(const lpx_model* model);
  lpx_status* (*tensor_at)(const lpx_model* model, uint64_t index, lpx_tensor_view* out_view);

  /* since 2.6. Optional (NULL: the plugin reads single files, recognised by `probe`). How
   * confident the plugin is that `path` (UTF-8: a file or a directory) holds its model, 0..100.
   * The host asks it about every path, and it is the only probe a directory gets (a Hugging Face
   * model is a directory). It may look at the file system; it keeps nothing. */
  int32_t (*probe_path)(lpx_instance* instance, const char* path);
  /* since 2.6. Optional, both or neither (NULL: the metadata can be looked up, not listed, and
   * `lpx-pipeline convert` refuses the model). How many metadata keys the model has, and the
   * key at `index` (0 <= index < count; UTF-8, NUL-terminated, owned by the model until close),
   * in the order the file gives them. */
  uint64_t (*metadata_count)(const lpx_model* model);
  lpx_status* (*metadata_key_at)(const lpx_model* model, uint64_t index, const char** out_key);
} lpx_model_format_api;

#ifdef __cplusplus
}
#endif

#endif
