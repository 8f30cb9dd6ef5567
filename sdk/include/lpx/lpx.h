/* Everything a plugin author needs, in one include. */
#ifndef LPX_LPX_H
#define LPX_LPX_H

#include "lpx/host_api.h"
#include "lpx/kinds/model_format.h"
#include "lpx/kinds/quant_backend.h"
#include "lpx/kinds/sampler.h"
#include "lpx/kinds/tensor.h"
#include "lpx/kinds/transport.h"
#include "lpx/options.h"
#include "lpx/plugin.h"
#include "lpx/status.h"
#include "lpx/version.h"

#endif
