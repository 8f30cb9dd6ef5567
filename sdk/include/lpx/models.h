/* The models a pipeline serves, as transports see them (since ABI 2.5).
 *
 * A pipeline serves one model ([model]) or several ([[models]]; `serve --model A --model B`).
 * Each has a name (its [[models]].name, else its file's stem) that requests route by. The first
 * is the default: it loads before the transport runs and stays loaded. The others load when a
 * request first needs them and unload after [engine] keep_alive_s without one, within the
 * [engine] memory_budget_mb: a model that does not fit beside the busy ones is refused with
 * LPX_ERR_UNAVAILABLE and a time to try again, never loaded into an out-of-memory failure.
 * The host may replace the list while the transport runs (the pipeline reloaded on SIGHUP):
 * requests in flight keep the engines they hold; new acquisitions see the new list.
 *
 * Threading: every function is thread-safe. Lifetime: the table and the models object live from
 * the start of the transport's `run` until it returns; every lease must be released before.
 */
#ifndef LPX_MODELS_H
#define LPX_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "lpx/engine.h"
#include "lpx/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lpx_models lpx_models; /* opaque, host-owned */

typedef enum lpx_model_state {
  LPX_MODEL_UNLOADED = 0,
  LPX_MODEL_LOADING = 1,
  LPX_MODEL_LOADED = 2
} lpx_model_state;

/* One served model, as `list` shows it. Strings are host-owned, valid during the callback. */
typedef struct lpx_model_entry {
  uint32_t struct_size;
  const char* name;         /* what requests name it by (UTF-8) */
  const char* path;         /* its file */
  int32_t state;            /* an lpx_model_state */
  int32_t is_default;       /* nonzero for the default model (requests that name none) */
  uint32_t context_size;    /* positions per sequence as configured; 0: the model's own */
  uint32_t leases;          /* engines held by transports now */
  uint64_t memory_bytes;    /* weights + KV cache: measured when loaded, else estimated */
  double idle_seconds;      /* since its last lease was released; 0 while leased */
  /* since 2.7 (read only when struct_size covers it): for a LoRA adapter served beside its base
   * model ([model] adapters), listed right after the base as "BASE:ADAPTER", the base's name;
   * NULL for a model. An adapter entry's state, leases and memory are its base's, its path the
   * adapter file. */
  const char* parent;
} lpx_model_entry;

/* What `acquire` hands over. */
typedef struct lpx_model_lease {
  uint32_t struct_size;
  uint64_t id;           /* for release; 0 on failure */
  lpx_engine* engine;    /* the model's engine (lpx_run_context.engine_api drives it); NULL on failure */
  const char* name;      /* the model's name; host-owned, valid until the lease is released */
  uint64_t load_id;      /* differs for every load of every model: per-engine caches key on it */
  double retry_after_s;  /* LPX_ERR_UNAVAILABLE: when trying again may succeed; else 0 */
  /* since 2.7 (filled when struct_size covers it): the LoRA adapter the acquired name selected
   * ("BASE:ADAPTER" leases BASE's engine with adapter "ADAPTER"), for lpx_request.adapter; NULL
   * for a plain model name. Host-owned, valid until the lease is released. */
  const char* adapter;
} lpx_model_lease;

/* Called exactly once per acquire: `error` NULL and `lease` filled on success; else `error`
 * (host-owned, valid during the call: do not release it) says why and `lease` holds only
 * retry_after_s. Runs on the acquiring thread when the model is loaded already, else on the
 * host's loader thread: return quickly. */
typedef void (*lpx_model_acquired)(void* user, const lpx_status* error, const lpx_model_lease* lease);

typedef struct lpx_models_api {
  uint32_t struct_size; /* sizeof(lpx_models_api) as the host compiled it */

  /* Calls `visit` for every served model, the default first, under the list's lock: `visit`
   * must not call back into this table. */
  void (*list)(lpx_models* models, void (*visit)(void* user, const lpx_model_entry* entry), void* user);
  /* Leases the engine of model `name` (UTF-8; NULL or "": the default; "MODEL:ADAPTER": MODEL's
   * engine, with lease.adapter set), loading it first if needed; the engine stays loaded until
   * the lease is released. Errors: LPX_ERR_NOT_FOUND (no
   * such model; the message names those served), LPX_ERR_UNAVAILABLE (it does not fit in the
   * memory budget beside the models in use now, or the host is stopping), or why loading
   * failed. */
  void (*acquire)(lpx_models* models, const char* name, lpx_model_acquired on_acquired, void* user);
  /* Gives a lease back. Unknown ids are ignored. */
  void (*release)(lpx_models* models, uint64_t lease_id);
  /* Leases the engine of model `name` only if it is loaded now, never loading it (for metrics
   * and listings): returns 1 and fills *out_lease, else returns 0 and leaves it untouched. */
  int32_t (*acquire_if_loaded)(lpx_models* models, const char* name, lpx_model_lease* out_lease);
} lpx_models_api;

#ifdef __cplusplus
}
#endif

#endif
