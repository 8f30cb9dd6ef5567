/* Shared by the hand-written test plugins: a valid sampler descriptor they then break in one way
 * each, written in plain C against the SDK headers like a third party would. */
#ifndef LPX_TEST_RAW_DESCRIPTOR_H
#define LPX_TEST_RAW_DESCRIPTOR_H

#include <stddef.h>
#include <lpx/lpx.h>

#ifdef __cplusplus
#define RAW_CAST(type, value) reinterpret_cast<type>(value)
#else
#define RAW_CAST(type, value) ((type)(value))
#endif

static lpx_status* raw_create(lpx_plugin_state* state, const lpx_options* options,
                              lpx_instance** out) {
  (void)state;
  (void)options;
  static int instance;
  *out = RAW_CAST(lpx_instance*, &instance);
  return NULL;
}
static void raw_destroy(lpx_instance* instance) { (void)instance; }
static lpx_status* raw_apply(lpx_instance* instance, lpx_sampler_state* state,
                             lpx_candidates* candidates) {
  (void)instance;
  (void)state;
  candidates->selected = candidates->size > 0 ? 0 : -1;
  return NULL;
}
static const lpx_sampler_api raw_sampler_api = {sizeof(lpx_sampler_api), NULL, NULL, raw_apply,
                                                NULL, NULL, NULL, NULL, NULL};

/* A descriptor for plugin NAME with every entry set; tests override single fields. */
#define RAW_DESCRIPTOR(NAME)                                                                  \
  {                                                                                           \
    LPX_ABI_MAJOR, LPX_ABI_MINOR, sizeof(lpx_plugin_descriptor), LPX_KIND_SAMPLER, NAME,     \
        "0.0.1", "Apache-2.0", "test plugin", NULL, 0, sizeof(lpx_option_spec), NULL, 0,     \
        NULL, NULL, NULL, raw_create, raw_destroy, &raw_sampler_api, NULL                     \
  }

#endif
