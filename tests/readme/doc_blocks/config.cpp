// An emcp_config.h of the documents: the options it sets, then opt.h, whose range checks
// (#error) must accept them.
// @BLOCK@
#include "emcp/opt.h"
static_assert(EMCP_ARENA_SIZE > 0, "opt.h gives every option a value");
