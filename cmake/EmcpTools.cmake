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
