# fuzz_tls_http: the TLS layer (ports/mbedtls: emcp::mbedtls::TlsLayer) between a fake listener
# and the HTTP engine, driven by Mbed TLS clients (tests/tls/tls_world.h) and by raw bytes
# (hostile TLS). Included from this folder's CMakeLists.txt (include(tls.cmake)); its seeds are
# plaintext requests written by make_tls_seeds.sh (no binary files kept).
if(TARGET emcp_mbedtls_tls)
  add_executable(fuzz_tls_http ${CMAKE_CURRENT_LIST_DIR}/fuzz_tls_http.cpp
                 ${CMAKE_CURRENT_LIST_DIR}/../tls/tls_world.cpp ${CMAKE_CURRENT_LIST_DIR}/../tls/tls_common.cpp
                 ${CMAKE_CURRENT_LIST_DIR}/../unit/mcp_fixture_app.cpp)
  target_compile_options(fuzz_tls_http PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_tls_http PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_tls_http PRIVATE emcp_core emcp_mbedtls_tls emcp_flags)
  set(EMCP_TLS_SEEDS_DIR ${CMAKE_CURRENT_BINARY_DIR}/tls_seeds)
  add_test(NAME fuzz_tls_http_seeds
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/make_tls_seeds.sh ${EMCP_TLS_SEEDS_DIR})
  set_tests_properties(fuzz_tls_http_seeds PROPERTIES FIXTURES_SETUP fuzz_tls_seeds LABELS fuzz)
  # A fresh working corpus each run (bounded), seeds read-only.
  add_test(NAME fuzz_tls_http_run
    COMMAND sh -c "rm -rf work && mkdir -p work && exec \"$0\" -max_total_time=${EMCP_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 work \"$1\""
            $<TARGET_FILE:fuzz_tls_http> ${EMCP_TLS_SEEDS_DIR}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz_tls_http_wd)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz_tls_http_wd)
  set_tests_properties(fuzz_tls_http_run PROPERTIES FIXTURES_REQUIRED fuzz_tls_seeds LABELS fuzz TIMEOUT 600)
endif()
