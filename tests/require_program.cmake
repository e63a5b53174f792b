# cmake -DEMCP_SOURCE_DIR=... -P require_program.cmake: asks for a program that does not exist
# (test required_tool_missing_fails: configuring must fail and say which tests need it).
include(${EMCP_SOURCE_DIR}/cmake/EmcpTools.cmake)
emcp_require_program(EMCP_CANARY_PROGRAM emcp-no-such-program "the canary tests")
message(STATUS "configured without emcp-no-such-program")
