/* A sampler of ABI 2.0 running in a newer host: its descriptor says minor 0, and right after
 * 2.0's last entry (draw_uniform), where 2.1 put bind_vocabulary, its table holds a function that
 * aborts; the table's struct_size even counts that slot (as a plugin padding its tables might).
 * The host must go by the minor: load the plugin, run it, and never copy or call that entry. */
#include <stdlib.h>

#include "raw_descriptor.h"

static lpx_status* must_never_be_called(lpx_instance* instance, const lpx_vocabulary* vocabulary) {
  (void)instance;
  (void)vocabulary;
  abort();
}

/* The 2.0 table, with the would-be 2.1 entry after it. */
struct table_2_0_then_more {
  uint32_t struct_size;
  lpx_status* (*state_create)(lpx_instance*, uint64_t, lpx_sampler_state**);
  void (*state_destroy)(lpx_sampler_state*);
  lpx_status* (*apply)(lpx_instance*, lpx_sampler_state*, lpx_candidates*);
  void (*accept)(lpx_instance*, lpx_sampler_state*, int32_t);
  void (*reset)(lpx_instance*, lpx_sampler_state*);
  int32_t (*standard_op)(lpx_instance*, lpx_sampling_op*);
  double (*draw_uniform)(lpx_instance*, lpx_sampler_state*);
  lpx_status* (*bind_vocabulary)(lpx_instance*, const lpx_vocabulary*);
};

static const struct table_2_0_then_more sampler = {
    sizeof(struct table_2_0_then_more), NULL, NULL, raw_apply, NULL, NULL,
    NULL, NULL, must_never_be_called};

LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void) {
  static lpx_plugin_descriptor d = RAW_DESCRIPTOR("abi-minor-older");
  d.abi_minor = 0;
  d.kind_api = &sampler;
  return &d;
}
