# emcp_configure(): how emcp is built with a configuration (the options of emcp/opt.h), the one
# way, in a project of your own and in this tree alike. Every option is part of the inline ABI
# namespace (emcp/opt.h): code compiled with another configuration than the libraries it links
# does not link, so a configuration is always the libraries' and the program's together.
#
#   emcp_configure([CONFIG_DIR <dir>] [DEFINES <OPTION=value>...])
#
# Your project's configuration, after emcp's targets exist (find_package(emcp), or
# add_subdirectory / FetchContent of emcp's source): emcp::core, and through it every emcp
# library and every program that links one, compile with the emcp_config.h in CONFIG_DIR
# (relative to the calling folder) on the include path and DEFINES as compile definitions,
# both PUBLIC. Once per build tree.
#
#   emcp_configure(NAME <name> [CONFIG_DIR <dir>] [DEFINES <OPTION=value>...]
#                  LIBRARIES <lib>... [EXCLUDE_FROM_ALL])
#
# A second configuration beside the first, for the programs that link it: for each emcp library
# named (emcp_core, emcp_posix, ...), a copy <lib>_<name> compiled from the same sources with
# the same settings and, besides, this configuration. A copy links the copies of the other
# libraries instead of their originals (those named, and those an earlier call made with the
# same name). This tree builds its examples and tests that need their own options so
# (examples/echo, tests/, and a firmware image's DEFINES: emcp_add_firmware()).
function(emcp_configure)
  cmake_parse_arguments(CF "EXCLUDE_FROM_ALL" "NAME;CONFIG_DIR" "DEFINES;LIBRARIES" ${ARGN})
  if(CF_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "emcp_configure(${ARGN}): unexpected ${CF_UNPARSED_ARGUMENTS} "
                        "(cmake/EmcpConfigure.cmake gives the two forms)")
  endif()
  if(NOT TARGET emcp_core)
    message(FATAL_ERROR "emcp_configure(): emcp is not added yet: call it after find_package(emcp) "
                        "(or add_subdirectory / FetchContent_MakeAvailable of emcp's source)")
  endif()
  if(CF_CONFIG_DIR)
    get_filename_component(CF_CONFIG_DIR "${CF_CONFIG_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(NOT EXISTS "${CF_CONFIG_DIR}/emcp_config.h")
      message(FATAL_ERROR "emcp_configure(): CONFIG_DIR ${CF_CONFIG_DIR} holds no emcp_config.h")
    endif()
  endif()
  if(NOT CF_NAME)
    if(CF_LIBRARIES OR CF_EXCLUDE_FROM_ALL)
      message(FATAL_ERROR "emcp_configure(): LIBRARIES and EXCLUDE_FROM_ALL make copies: they need a NAME")
    endif()
    get_property(done GLOBAL PROPERTY EMCP_CONFIGURED)
    if(done)
      message(FATAL_ERROR "emcp_configure(): emcp's targets have their configuration already (${done}); "
                          "a second one is emcp_configure(NAME <name> ... LIBRARIES ...)")
    endif()
    set_property(GLOBAL PROPERTY EMCP_CONFIGURED "${CMAKE_CURRENT_LIST_FILE}")
    if(CF_CONFIG_DIR)
      target_include_directories(emcp_core BEFORE PUBLIC ${CF_CONFIG_DIR})
    endif()
    if(CF_DEFINES)
      target_compile_definitions(emcp_core PUBLIC ${CF_DEFINES})
    endif()
    return()
  endif()
  if(NOT CF_LIBRARIES)
    message(FATAL_ERROR "emcp_configure(NAME ${CF_NAME}): no LIBRARIES to copy")
  endif()
  set(exclude)
  if(CF_EXCLUDE_FROM_ALL)
    set(exclude EXCLUDE_FROM_ALL)
  endif()
  foreach(lib ${CF_LIBRARIES})
    get_target_property(sources ${lib} SOURCES)
    get_target_property(dir ${lib} SOURCE_DIR)
    set(abs)
    foreach(src ${sources})
      if(NOT IS_ABSOLUTE ${src})
        set(src ${dir}/${src})
      endif()
      list(APPEND abs ${src})
    endforeach()
    set(copy ${lib}_${CF_NAME})
    add_library(${copy} STATIC ${exclude} ${abs})
    get_target_property(includes ${lib} INTERFACE_INCLUDE_DIRECTORIES)
    if(includes)
      target_include_directories(${copy} PUBLIC ${includes})
    endif()
    get_target_property(system_includes ${lib} INTERFACE_SYSTEM_INCLUDE_DIRECTORIES)
    if(system_includes)
      target_include_directories(${copy} SYSTEM PUBLIC ${system_includes})
    endif()
    if(CF_CONFIG_DIR)
      target_include_directories(${copy} BEFORE PUBLIC ${CF_CONFIG_DIR})
    endif()
    get_target_property(definitions ${lib} INTERFACE_COMPILE_DEFINITIONS)
    if(definitions)
      target_compile_definitions(${copy} PUBLIC ${definitions})
    endif()
    if(CF_DEFINES)
      target_compile_definitions(${copy} PUBLIC ${CF_DEFINES})
    endif()
    get_target_property(options ${lib} COMPILE_OPTIONS)
    if(options)
      target_compile_options(${copy} PRIVATE ${options})
    endif()
    foreach(kind LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(deps ${lib} ${kind})
      if(NOT deps)
        continue()
      endif()
      set(mapped)
      foreach(dep ${deps})
        if(dep IN_LIST CF_LIBRARIES OR TARGET ${dep}_${CF_NAME})
          set(dep ${dep}_${CF_NAME})
        endif()
        list(APPEND mapped ${dep})
      endforeach()
      if(kind STREQUAL "LINK_LIBRARIES")
        target_link_libraries(${copy} PRIVATE ${mapped})
      else()
        target_link_libraries(${copy} INTERFACE ${mapped})
      endif()
    endforeach()
  endforeach()
endfunction()
