# Programs the tests need. A missing one fails the configure step with what needs it, instead
# of its tests silently not being registered; a developer without it opts out explicitly with
# -DEMCP_ALLOW_MISSING_TOOLS=ON (those tests are then left out with a warning, and
# scripts/test, which never sets it, would fail its pinned test list).
option(EMCP_ALLOW_MISSING_TOOLS "Configure without the tests whose programs (node, qemu, valgrind) are missing" OFF)

# emcp_require_program(VAR NAME WHAT): finds NAME into the cache variable VAR; WHAT names the
# tests that need it.
function(emcp_require_program var name what)
  find_program(${var} ${name})
  if(${var})
    return()
  endif()
  if(EMCP_ALLOW_MISSING_TOOLS)
    message(WARNING "${name} not found: ${what} are NOT registered (EMCP_ALLOW_MISSING_TOOLS=ON)")
  else()
    message(FATAL_ERROR "${name} not found: ${what} need it. Install it (scripts/test installs "
                        "everything it needs), or configure with -DEMCP_ALLOW_MISSING_TOOLS=ON to "
                        "leave those tests out.")
  endif()
endfunction()

# emcp_node_test(NAME SCRIPT): the ctest test NAME runs the node:test file SCRIPT (in its
# folder) with two reporters: spec on stdout (the test's log) and TAP into
# <build>/node-reports/NAME.tap, whose tests and suites marked `# TODO` and `# SKIP` scripts/test
# counts and holds against the counts pinned beside NAME in tests/expected/<preset>.txt
# (tests/check_test_list.py): a todo or skipped subtest is counted, never invisible. Every
# node:test file a test runs is registered through this (canaries that must fail aside).
set(EMCP_NODE_REPORTS ${CMAKE_BINARY_DIR}/node-reports)
file(MAKE_DIRECTORY ${EMCP_NODE_REPORTS})
function(emcp_node_test name script)
  get_filename_component(dir ${script} DIRECTORY)
  add_test(NAME ${name}
    COMMAND ${EMCP_NODE} --test --test-reporter=spec --test-reporter-destination=stdout
            --test-reporter=tap --test-reporter-destination=${EMCP_NODE_REPORTS}/${name}.tap ${script}
    WORKING_DIRECTORY ${dir})
endfunction()
