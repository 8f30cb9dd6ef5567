/* Transport plugins: the way users reach a pipeline (terminal, HTTP, batch files).
 *
 * `lpx-pipeline run` creates every plugin of the pipeline, then calls the transport's `run` on the
 * main thread; `run` returns when the transport's work is done or after a stop was requested. The
 * host calls `request_stop` from another thread (on SIGINT/SIGTERM); it must return quickly, and
 * `run` must then finish in bounded time, returning NULL or an LPX_ERR_CANCELLED status.
 */
#ifndef LPX_KINDS_TRANSPORT_H
#define LPX_KINDS_TRANSPORT_H

#include <stdint.h>

#include "lpx/engine.h"
#include "lpx/models.h"
#include "lpx/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the host gives a running transport. Owned by the host, valid during `run`. Fields are
 * appended in later minors; read a field only when struct_size covers it. */
typedef struct lpx_run_context {
  uint32_t struct_size;      /* sizeof(lpx_run_context) as the host compiled it */
  const char* pipeline_path; /* UTF-8 path of the pipeline file */
  const char* pipeline_name; /* [pipeline].name, or the file stem */
  /* since 1.2 */
  lpx_engine* engine;               /* the pipeline's decode engine; see lpx/engine.h */
  const lpx_engine_api* engine_api; /* its functions */
  int32_t show_stats;               /* `run --stats`: print per-answer statistics */
  /* since 1.3: for records a transport keeps of a run (a batch job's summary). UTF-8, host-owned. */
  const char* resolved_pipeline; /* the pipeline as run, every option with its value, as TOML */
  const char* host_version;      /* LPX release version, e.g. "0.5.0" */
  const char* host_commit;       /* git commit of the host build ("+dirty" if modified), or "unknown" */
  /* since 2.5: every model the pipeline serves (lpx/models.h). A transport that declares the
   * capability "transport:models" reaches them here and gets `engine` NULL; the others get
   * `engine`, the default model's, held for the whole run, and serve one model only. */
  lpx_models* models;
  const lpx_models_api* models_api;
  /* since 2.5: what this run is, as one JSON object (UTF-8, host-owned): LPX version and commit,
   * the CPU and the kernel path it runs, the OS, GPU driver, CUDA runtime and GPU names, each
   * model's file and SHA-256, and the resolved pipeline; for records of a run (an info
   * endpoint, a batch summary). docs/deploy.md lists the fields. Hashing the models takes
   * time, so only a transport that declares the capability "transport:run-record" gets it;
   * the others get NULL. */
  const char* run_record_json;
} lpx_run_context;

typedef struct lpx_transport_api {
  uint32_t struct_size; /* sizeof(lpx_transport_api) as the plugin compiled it */

  /* since 1.0. Required. Serve until done or stopped. */
  lpx_status* (*run)(lpx_instance* instance, const lpx_run_context* context);
  /* Required. Thread-safe, non-blocking, idempotent; may be called before, during or after run. */
  void (*request_stop)(lpx_instance* instance);
} lpx_transport_api;

#ifdef __cplusplus
}
#endif

#endif
