# find_package(emcp) (after `cmake --install` of emcp): adds emcp's installed sources
# (<prefix>/share/emcp/src) to this project, as add_subdirectory would, so the targets are the
# same, emcp::core, emcp::posix, emcp::posix_serve, emcp::mbedtls, emcp::mbedtls_tls, emcp::lwip
# (with EMCP_WITH_LWIP) on the host and emcp::board for a board (EMCP_BOARD with a cross
# toolchain), and they are compiled with this project's configuration: set EMCP_CONFIG_DIR (the
# folder of your emcp_config.h) before find_package. docs/getting-started.md.
get_filename_component(_emcp_src "${CMAKE_CURRENT_LIST_DIR}/../src" ABSOLUTE)
if(EMCP_CONFIG_DIR AND NOT IS_ABSOLUTE "${EMCP_CONFIG_DIR}")
  # Relative to the folder that calls find_package.
  get_filename_component(EMCP_CONFIG_DIR "${EMCP_CONFIG_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
endif()
# Once per build tree: a second find_package (another folder of the project) finds the targets.
if(NOT TARGET emcp::core)
  add_subdirectory("${_emcp_src}" "${CMAKE_BINARY_DIR}/_emcp")
endif()
unset(_emcp_src)
