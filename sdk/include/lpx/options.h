/* Plugin options: the schema a plugin declares and the view through which it reads its values.
 *
 * A plugin lists its options in its descriptor. The host validates the pipeline file against that
 * list before anything heavy is created: unknown keys, wrong types, missing required options and
 * out-of-range values are reported with file:line:column. A plugin therefore receives only
 * well-typed values, with defaults already filled in.
 */
#ifndef LPX_OPTIONS_H
#define LPX_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lpx_option_type {
  LPX_OPTION_STRING = 1,
  LPX_OPTION_INT = 2,         /* 64-bit signed integer */
  LPX_OPTION_FLOAT = 3,       /* double; an integer literal is accepted */
  LPX_OPTION_BOOL = 4,
  LPX_OPTION_STRING_LIST = 5, /* TOML array of strings */
  LPX_OPTION_INT_LIST = 6     /* TOML array of integers */
} lpx_option_type;

/* Flags for lpx_option_spec.flags. */
#define LPX_OPTION_REQUIRED 0x1u  /* the pipeline must set it; `default_value` must be NULL */
#define LPX_OPTION_HAS_RANGE 0x2u /* numbers (and list items) must lie in [min, max] */

/* One declared option. Arrays of these are strided by lpx_plugin_descriptor.option_spec_size, so
 * fields may be appended in later minors. All strings are static (live as long as the library). */
typedef struct lpx_option_spec {
  const char* name;          /* lowercase key as written in the pipeline file, e.g. "top_k" */
  int32_t type;              /* an lpx_option_type */
  uint32_t flags;            /* LPX_OPTION_* */
  const char* default_value; /* TOML literal ("0.8", "\"auto\"", "[1, 2]") or NULL for none */
  const char* description;   /* one line, shown by `lpx-pipeline plugins --options` */
  double min;                /* with LPX_OPTION_HAS_RANGE */
  double max;
  const char* choices;       /* STRING only: allowed values separated by '|', or NULL for any */
} lpx_option_spec;

/* The resolved options of one plugin instance. Opaque; read it through lpx_host_api's
 * option_* functions. Valid only during the call it is passed to: copy what you keep. */
typedef struct lpx_options lpx_options;

#ifdef __cplusplus
}
#endif

#endif
