/* Status objects: how every boundary function reports failure.
 *
 * A function that can fail returns `lpx_status*`. NULL means success. A non-NULL status is owned by
 * whoever receives it, who must call `status->release(status)` exactly once. The status carries its
 * own release function, so a status made by a plugin can be freed by the host and vice versa without
 * sharing an allocator. A failing call leaves its out-parameters untouched.
 *
 * The code says what kind of failure it is, so a transport answers it without reading the
 * message (HTTP: invalid argument 400, not found 404, conflict 409, resource exhausted 413,
 * unavailable 503, …); `field`, when set, names the request field at fault. Since 2.0 a status
 * carries its size and grows at its end: read a field only when struct_size covers it
 * (lpx_status_field does).
 */
#ifndef LPX_STATUS_H
#define LPX_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum lpx_status_code {
  LPX_OK = 0,                   /* never stored in a status: success is NULL */
  LPX_ERR_INVALID_ARGUMENT = 1, /* the caller passed something wrong (bad option, bad input) */
  LPX_ERR_NOT_FOUND = 2,        /* a named thing (file, option, token) does not exist */
  LPX_ERR_OUT_OF_MEMORY = 3,
  LPX_ERR_UNSUPPORTED = 4,      /* valid request this plugin cannot serve (type, device...) */
  LPX_ERR_IO = 5,               /* file or network failure */
  LPX_ERR_CANCELLED = 6,        /* stopped on request */
  LPX_ERR_INTERNAL = 7,         /* a bug: an invariant broke, or an exception was caught */
  LPX_ERR_RESOURCE_EXHAUSTED = 8, /* a configured limit (context, queue) was reached */
  LPX_ERR_INCOMPLETE = 9, /* stopped on request before the work was done (a batch job that can
                           * be resumed); the host exits nonzero */
  LPX_ERR_UNAVAILABLE = 10, /* since 2.0: cannot serve now, may later (shutting down, overloaded) */
  LPX_ERR_CONFLICT = 11     /* since 2.0: the target is busy with other work (a session already
                               running a request) */
} lpx_status_code;

typedef struct lpx_status lpx_status;
struct lpx_status {
  int32_t code;          /* an lpx_status_code other than LPX_OK */
  const char* message;   /* UTF-8, NUL-terminated, never NULL; lives until release() */
  void (*release)(lpx_status* self); /* frees the status; call exactly once */
  uint32_t struct_size;  /* since 2.0: sizeof(lpx_status) as its maker compiled it */
  const char* field;     /* since 2.0: NULL, or the request field the failure is about, UTF-8
                            ("max_tokens", "logit_bias", "stop", "session", "prompt"...); lives
                            until release() */
};

/* Returns the message of `s`, or "" for NULL. Does not take ownership. */
static inline const char* lpx_status_message(const lpx_status* s) { return s ? s->message : ""; }

/* Returns the field of `s`, or NULL (none, NULL status, or a status too old to have one). */
static inline const char* lpx_status_field(const lpx_status* s) {
  return s && s->struct_size >= sizeof(lpx_status) ? s->field : NULL;
}

/* Releases `s` if it is not NULL. */
static inline void lpx_status_release(lpx_status* s) {
  if (s) s->release(s);
}

#ifdef __cplusplus
}
#endif

#endif
