# Flags for all code written in this repository (not for GoogleTest or benchmark peers).
add_library(emcp_flags INTERFACE)
target_compile_options(emcp_flags INTERFACE
  -fno-exceptions -fno-rtti
  -Wall -Wextra -Wconversion -Wshadow -Werror
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
