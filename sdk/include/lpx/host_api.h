/* The services the host offers a plugin: logging, memory, metrics, and reading its options.
 *
 * The host hands each loaded plugin its own `lpx_host_api` in `init`. The table and its `context`
 * stay valid until the plugin's `shutdown` returns. Every function is thread-safe unless noted.
 * Read `struct_size` before using an entry added after 1.0 (none yet).
 *
 * Enumerations cross the ABI as int32_t (the enum names the values), so an unexpected value from
 * either side is a checked error, never undefined behaviour.
 */
#ifndef LPX_HOST_API_H
#define LPX_HOST_API_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/options.h"
#include "lpx/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lpx_log_level {
  LPX_LOG_TRACE = 0,
  LPX_LOG_DEBUG = 1,
  LPX_LOG_INFO = 2,
  LPX_LOG_WARN = 3,
  LPX_LOG_ERROR = 4
} lpx_log_level;

typedef enum lpx_metric_kind {
  LPX_METRIC_COUNTER = 1,   /* monotonically increasing; lpx_host_api.metric_record adds */
  LPX_METRIC_GAUGE = 2,     /* current value; metric_record sets */
  LPX_METRIC_HISTOGRAM = 3  /* distribution; metric_record observes one sample */
} lpx_metric_kind;

/* Handle of a registered metric; 0 is never a valid handle. */
typedef uint32_t lpx_metric_id;

/* Opaque per-plugin host state, passed back on every call. Owned by the host. */
typedef struct lpx_host_context lpx_host_context;

typedef struct lpx_host_api {
  uint32_t struct_size;  /* sizeof(lpx_host_api) as the host compiled it */
  uint32_t abi_major;    /* the host's ABI version */
  uint32_t abi_minor;
  lpx_host_context* context; /* pass as first argument to the functions below */

  /* since 1.0 — logging. `message` is UTF-8, borrowed for the call. The host prefixes the
   * plugin's name. Cheap to call below the active level (the host filters first). */
  void (*log)(lpx_host_context* context, int32_t level /* lpx_log_level */, const char* message);
  /* Whether `level` would be emitted; lets a plugin skip formatting work. */
  int32_t (*log_enabled)(lpx_host_context* context, int32_t level /* lpx_log_level */);

  /* since 1.0 — memory. `alignment` is a power of two (0 means alignof(max_align_t)).
   * Returns NULL when out of memory. Free with `free` only. The host accounts these bytes in its
   * memory report. */
  void* (*alloc)(lpx_host_context* context, size_t size, size_t alignment);
  void (*free)(lpx_host_context* context, void* pointer);

  /* since 1.0 — metrics. `name` must match [a-z_][a-z0-9_]*; the host prefixes "lpx_".
   * `help` is one line. `bucket_bounds` (histograms only, else NULL/0) are ascending upper bounds,
   * copied by the host. Registering an existing name with the same kind returns the same id. */
  lpx_status* (*metric_register)(lpx_host_context* context, int32_t kind /* lpx_metric_kind */,
                                 const char* name, const char* help, const double* bucket_bounds,
                                 uint32_t bucket_count, lpx_metric_id* out_id);
  /* Counter: add `value` (>= 0). Gauge: set to `value`. Histogram: observe `value`.
   * Allocation-free and lock-free enough for a decode loop. */
  void (*metric_record)(lpx_host_context* context, lpx_metric_id id, double value);

  /* since 1.0 — options. Each getter fails with LPX_ERR_NOT_FOUND for a name the plugin did not
   * declare and LPX_ERR_INVALID_ARGUMENT for a declared name of another type. Declared options
   * without value and without default report LPX_ERR_NOT_FOUND; `option_is_set` tells beforehand.
   * Strings and lists returned are borrowed from `options` and share its lifetime. */
  int32_t (*option_is_set)(const lpx_options* options, const char* name);
  lpx_status* (*option_string)(const lpx_options* options, const char* name, const char** out_utf8,
                               size_t* out_length);
  lpx_status* (*option_int)(const lpx_options* options, const char* name, int64_t* out_value);
  lpx_status* (*option_float)(const lpx_options* options, const char* name, double* out_value);
  lpx_status* (*option_bool)(const lpx_options* options, const char* name, int32_t* out_value);
  /* Lists: number of items, then items by index. */
  lpx_status* (*option_list_size)(const lpx_options* options, const char* name, size_t* out_size);
  lpx_status* (*option_list_string)(const lpx_options* options, const char* name, size_t index,
                                    const char** out_utf8, size_t* out_length);
  lpx_status* (*option_list_int)(const lpx_options* options, const char* name, size_t index,
                                 int64_t* out_value);

  /* since 1.0 — a status made by the host, for plugins written in C. `message` is copied.
   * Never returns NULL (falls back to a static out-of-memory status). */
  lpx_status* (*status_create)(int32_t code /* lpx_status_code */, const char* message);
} lpx_host_api;

#ifdef __cplusplus
}
#endif

#endif
