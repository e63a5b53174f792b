# emcp_heapcheck_o0_canaries([FLAGS...]): the zero-heap checker against objects compiled at -O0
# (no build type, or Debug: what a new user builds first) by this build's C++ compiler with FLAGS
# (a board's CPU flags): a GCC build keeps placement new out of line there.
#   zero_heap_nm_detects_new_O0: every allocating operator new and new[] (nothrow and
#     align_val_t ones included, and a look-alike of placement new) is listed (new_canary.cpp);
#   zero_heap_nm_passes_placement_new_O0: an object that holds placement new and new[] passes
#     (placement_canary.cpp; GCC only: Clang inlines them at -O0 too, nothing to check).
# The names cover either size_t: m (unsigned long, 64-bit hosts), j (unsigned int, 32-bit).
# Compiled by hand: a sanitizer build's flags would give the objects more symbols of their own.
set(emcp_heapcheck_dir ${CMAKE_CURRENT_LIST_DIR})
function(emcp_heapcheck_o0_canaries)
  set(objects)
  foreach(canary new placement)
    set(object ${CMAKE_CURRENT_BINARY_DIR}/heapcheck_${canary}_O0.o)
    add_custom_command(OUTPUT ${object}
      COMMAND ${CMAKE_CXX_COMPILER} ${ARGN} -std=c++17 -O0 -fno-exceptions -c
              ${emcp_heapcheck_dir}/${canary}_canary.cpp -o ${object}
      DEPENDS ${emcp_heapcheck_dir}/${canary}_canary.cpp VERBATIM)
    list(APPEND objects ${object})
  endforeach()
  add_custom_target(emcp_heapcheck_o0_canaries ALL DEPENDS ${objects})
  set(check ${emcp_heapcheck_dir}/canary_check.sh)
  add_test(NAME zero_heap_nm_detects_new_O0
    COMMAND sh ${check} caught ${CMAKE_NM} ${CMAKE_CURRENT_BINARY_DIR}/heapcheck_new_O0.o
            "_Znw[mj]" "_Zna[mj]" "_Znw[mj]RKSt9nothrow_t" "_Zna[mj]RKSt9nothrow_t"
            "_Znw[mj]St11align_val_t" "_Zna[mj]St11align_val_t"
            "_Znw[mj]St11align_val_tRKSt9nothrow_t" "_Zna[mj]St11align_val_tRKSt9nothrow_t"
            "_Znw[mj]Pvi")
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_test(NAME zero_heap_nm_passes_placement_new_O0
      COMMAND sh ${check} passes ${CMAKE_NM} ${CMAKE_CURRENT_BINARY_DIR}/heapcheck_placement_O0.o
              "_Znw[mj]Pv" "_Zna[mj]Pv")
  endif()
endfunction()
