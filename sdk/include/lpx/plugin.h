/* The LPX plugin ABI: what a plugin library exports and what the host does with it.
 *
 * A plugin is a shared library exporting exactly one symbol, `lpx_plugin_entry`, which returns a
 * pointer to a static `lpx_plugin_descriptor`. Nothing else needs to be visible (see
 * LPX_PLUGIN_EXPORT). Nothing C++ crosses this boundary: only C types, function pointers that never
 * throw, and `lpx_status*` for errors.
 *
 * Lifecycle (the host guarantees this order; see docs/plugin-abi.md):
 *   1. dlopen; call lpx_plugin_entry(); check abi_major/abi_minor/struct_size; read the descriptor.
 *   2. init(host, &state)            once per process (the host never loads a library twice at a
 *                                    time), before anything else. May fail.
 *   3. validate_options(state, opts) any number of times, for each pipeline section naming the
 *                                    plugin (since 1.1; cheap, allocates nothing heavy).
 *   4. create(state, opts, &inst)    per pipeline section; may allocate heavily.
 *      kind-specific calls on `inst` (each kind header states its thread-safety rules)
 *   5. destroy(inst)                 once per successful create, after the last kind call returns.
 *   6. shutdown(state)               once, after every instance is destroyed. The plugin must have
 *                                    joined every thread it started. Then the library is unloaded.
 * A plugin is never unloaded while any of its instances, states or threads is alive.
 */
#ifndef LPX_PLUGIN_H
#define LPX_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/host_api.h"
#include "lpx/options.h"
#include "lpx/status.h"
#include "lpx/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define LPX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define LPX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* The name of the one exported entry symbol. */
#define LPX_PLUGIN_ENTRY_SYMBOL "lpx_plugin_entry"

typedef enum lpx_plugin_kind {
  LPX_KIND_MODEL_FORMAT = 1,  /* reads model files: lpx/kinds/model_format.h */
  LPX_KIND_QUANT_BACKEND = 2, /* runs the tensor kernels of a device: lpx/kinds/quant_backend.h */
  LPX_KIND_SAMPLER = 3,       /* picks the next token: lpx/kinds/sampler.h */
  LPX_KIND_TRANSPORT = 4      /* talks to users and drives the engine: lpx/kinds/transport.h */
} lpx_plugin_kind;

/* Opaque, plugin-owned. */
typedef struct lpx_plugin_state lpx_plugin_state; /* from init, until shutdown */
typedef struct lpx_instance lpx_instance;         /* from create, until destroy */

typedef struct lpx_plugin_descriptor {
  /* since 1.0 — identity. The host reads these three first, before anything else. */
  uint32_t abi_major;   /* LPX_ABI_MAJOR the plugin was compiled against */
  uint32_t abi_minor;   /* LPX_ABI_MINOR the plugin was compiled against */
  uint32_t struct_size; /* sizeof(lpx_plugin_descriptor) as the plugin compiled it */

  int32_t kind; /* an lpx_plugin_kind */
  /* Static strings (live as long as the library is loaded). `name` matches [a-z0-9][a-z0-9_-]*,
   * and a plugin in file `lpx-NAME.so` must be called NAME. */
  const char* name;
  const char* version;     /* the plugin's own version, e.g. "1.4.2" */
  const char* license;     /* SPDX identifier, e.g. "Apache-2.0" */
  const char* description; /* one line */

  /* The options this plugin accepts (static array, may be NULL when option_count is 0). */
  const lpx_option_spec* options;
  uint32_t option_count;
  uint32_t option_spec_size; /* sizeof(lpx_option_spec) as compiled; the host strides by it */

  /* Static capability tags, listed by `lpx-pipeline plugins`, e.g. "tensor:q4_k", "device:cpu".
   * Tags say what the plugin can do in principle; `supports` answers for this machine. */
  const char* const* capabilities;
  uint32_t capability_count;

  /* Optional (NULL = nothing to do, the state is NULL). Called once. `host` lives until shutdown
   * returns. On failure the plugin is refused and shutdown is not called. */
  lpx_status* (*init)(const lpx_host_api* host, lpx_plugin_state** out_state);
  /* Optional. Called once after the last instance is destroyed. Must not fail. */
  void (*shutdown)(lpx_plugin_state* state);

  /* Optional (NULL = the static tags are the whole truth). Whether this plugin, on this machine,
   * supports `capability` (same tag syntax). Returns 1 or 0. Must not allocate or block. */
  int32_t (*supports)(lpx_plugin_state* state, const char* capability);

  /* Required. Make an instance configured by `options` (valid during the call only).
   * On failure *out_instance is untouched. */
  lpx_status* (*create)(lpx_plugin_state* state, const lpx_options* options,
                        lpx_instance** out_instance);
  /* Required. Frees an instance. Must not fail. */
  void (*destroy)(lpx_instance* instance);

  /* Required. The function table of `kind`: points to a static lpx_model_format_api,
   * lpx_quant_backend_api, lpx_sampler_api or lpx_transport_api, which begins with its own
   * uint32_t struct_size. */
  const void* kind_api;

  /* since 1.1. Optional (NULL = the declared types, ranges and choices are all there is to check).
   * Checks that involve several options or the machine ("min_p must not exceed top_p"), run while
   * the pipeline is validated, before any create. Cheap: no heavy allocation, no file loading.
   * Start the message with the offending option's name and a colon ("top_p: must be ...") so the
   * host can point at that line of the pipeline file. */
  lpx_status* (*validate_options)(lpx_plugin_state* state, const lpx_options* options);
} lpx_plugin_descriptor;

/* The entry point every plugin library exports. Must not fail or allocate: it returns a pointer to
 * static data (or NULL, which the host reports as a broken plugin). */
typedef const lpx_plugin_descriptor* (*lpx_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif
