# Mbed TLS for the boards (TLS 1.2 server or client, X.509, ECDSA/RSA, SHA-256: the configuration says
# what and why), built from Debian's source (`apt-get source mbedtls`, fetched into
# the build folder by scripts/third-party; nothing of Mbed TLS is committed) with emcp's
# configuration (ports/mbedtls/config/emcp_mbedtls_config.h). The host links the system's
# libmbedcrypto (ports/mbedtls/CMakeLists.txt).
#
#   EMCP_MBEDTLS_SOURCE_DIR   the unpacked source (default build/third_party/mbedtls)
#
# emcp_mbedtls_library(NAME): a static library NAME of the Mbed TLS modules the configuration
# enables. emcp's wrappers (ports/mbedtls/src: TLS, JWT keys, the pool) are compiled with each
# image instead (EMCP_MBEDTLS_WRAPPER_SOURCES): an image's emcp/opt.h options name the
# namespace emcp's functions live in.
set(EMCP_MBEDTLS_SOURCE_DIR "${emcp_SOURCE_DIR}/build/third_party/mbedtls" CACHE PATH
    "Mbed TLS's source (Debian's, from scripts/third-party)")
set(EMCP_MBEDTLS_WRAPPER_SOURCES ${emcp_SOURCE_DIR}/ports/mbedtls/src/tls.cpp ${emcp_SOURCE_DIR}/ports/mbedtls/src/jwt_key.cpp
    ${emcp_SOURCE_DIR}/ports/mbedtls/src/pool.cpp)

# emcp_mbedtls_library(NAME [DEFINES D...] [DEFAULT_CONFIG]): DEFINES override the
# configuration's defaults (#ifndef in emcp_mbedtls_config.h, e.g.
# MBEDTLS_SSL_IN_CONTENT_LEN=16384); PUBLIC, so the images that link NAME compile emcp's wrappers
# with the same options. DEFAULT_CONFIG: Mbed TLS's own configuration instead (its
# include/mbedtls/config.h, what a Linux system's libmbedtls has: files, sockets, the system's
# entropy and allocator), for a Linux target whose system has no Mbed TLS (ports/mbedtls,
# EMCP_MBEDTLS_FROM_SOURCE), and a shared library as the system's is: a program's zero-heap
# check reads its own code, not Mbed TLS's, and the unit tests put a function of their own in
# front of one of Mbed TLS's (tests/unit/tls_layer_test.cpp).
function(emcp_mbedtls_library name)
  cmake_parse_arguments(M "DEFAULT_CONFIG" "" "DEFINES" ${ARGN})
  set(dir ${EMCP_MBEDTLS_SOURCE_DIR})
  if(NOT EXISTS ${dir}/library/sha1.c)
    message(FATAL_ERROR "Mbed TLS's source is not in EMCP_MBEDTLS_SOURCE_DIR=${dir}: run scripts/third-party "
                        "(scripts/test does), or pass -DEMCP_MBEDTLS_SOURCE_DIR=/path/to/mbedtls")
  endif()
  # Every module: what the configuration leaves out compiles to nothing, and the images link
  # only what they call (-ffunction-sections, --gc-sections).
  file(GLOB sources ${dir}/library/*.c)
  if(M_DEFAULT_CONFIG)
    add_library(${name} SHARED ${sources})
  else()
    add_library(${name} STATIC ${sources})
  endif()
  target_include_directories(${name} SYSTEM PUBLIC ${dir}/include)
  if(NOT M_DEFAULT_CONFIG)
    target_include_directories(${name} PUBLIC ${emcp_SOURCE_DIR}/ports/mbedtls/config
                                              ${emcp_SOURCE_DIR}/ports/mbedtls/include)
    target_compile_definitions(${name} PUBLIC MBEDTLS_CONFIG_FILE="emcp_mbedtls_config.h")
  endif()
  if(M_DEFINES)
    target_compile_definitions(${name} PUBLIC ${M_DEFINES})
  endif()
  # Third-party code: its own warnings are not ours to fix (-w); the target's code generation
  # flags apply as everywhere.
  target_compile_options(${name} PRIVATE -w)
endfunction()
