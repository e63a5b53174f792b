# find_package(emcp) (after `cmake --install` of emcp): adds emcp's installed sources
# (<prefix>/share/emcp/src) to this project, as add_subdirectory would, so the targets are the
# same, emcp::core, emcp::posix, emcp::posix_serve, emcp::mbedtls, emcp::mbedtls_tls, emcp::lwip
# (with EMCP_WITH_LWIP) on Linux and emcp::board for a board (EMCP_BOARD with a cross
# toolchain), and so are the functions: emcp_configure(CONFIG_DIR <dir>) after find_package
# builds them with this project's configuration, emcp_add_firmware() makes a board's image.
# docs/getting-started.md.
get_filename_component(_emcp_src "${CMAKE_CURRENT_LIST_DIR}/../src" ABSOLUTE)
# Once per build tree: a second find_package (another folder of the project) finds the targets.
if(NOT TARGET emcp::core)
  add_subdirectory("${_emcp_src}" "${CMAKE_BINARY_DIR}/_emcp")
endif()
unset(_emcp_src)
