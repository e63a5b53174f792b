// Compiled with EMCP_LEGACY_ERA=0 and EMCP_MODERN_ERA=0 (tests/CMakeLists.txt,
// no_era_is_a_compile_error): emcp/opt.h must refuse it, naming both options.
#include "emcp/opt.h"
