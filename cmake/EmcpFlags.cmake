# Flags for all code written in this repository (not for GoogleTest or benchmark peers).
# Warnings are errors in emcp's own builds; in another project's (add_subdirectory,
# FetchContent) they stay warnings, since its compiler and optimization level (GCC 12 at -O3
# warns falsely about some memcpy) are not the ones emcp is tested with.
option(EMCP_WARNINGS_AS_ERRORS "Warnings in emcp's code fail the build" ${PROJECT_IS_TOP_LEVEL})
add_library(emcp_flags INTERFACE)
target_compile_options(emcp_flags INTERFACE
  -fno-exceptions -fno-rtti
  -Wall -Wextra -Wconversion -Wshadow $<$<BOOL:${EMCP_WARNINGS_AS_ERRORS}>:-Werror>
  -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wunused -Woverloaded-virtual
  -Wsign-conversion -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough -Winfinite-recursion)

# Test code: the same language rules (no exceptions, no RTTI, warnings as errors); GoogleTest
# adapts to both. Sign conversions are allowed in tests, where size_t/int mixes are harmless.
add_library(emcp_test_flags INTERFACE)
target_compile_options(emcp_test_flags INTERFACE
  -fno-exceptions -fno-rtti -Wall -Wextra -Wconversion -Wshadow -Werror -Wno-sign-conversion)

if(EMCP_SANITIZE)
  add_compile_options(-fsanitize=${EMCP_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${EMCP_SANITIZE})
endif()

# Fuzz builds: instrument all code for coverage (libFuzzer needs the edges of core, not only of
# the target file); the targets themselves link with -fsanitize=fuzzer.
if(EMCP_BUILD_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
