# Reads boards/esp32 the way ESP-IDF's build system does, without ESP-IDF: each example project,
# the components its EXTRA_COMPONENT_DIRS name, and its main component. Fails when a source file
# or include folder they list does not exist, when a component requires one that is neither in
# the project nor one of ESP-IDF's own, when a component lacks its manifest, when the component
# emcp does not make every component using it a FreeRTOS build (EMCP_BOARD_RTOS=1, public: the
# shared loop's pump then gives lwIP's core lock back while it waits), when a project using
# emcp_net (lwIP's raw API from the application's task) does not turn lwIP's core lock on in its
# sdkconfig.defaults, or when a source the native build type-checks for a project
# (EMCP_ESP32_SOURCES_<project>, "|"-separated: tests/CMakeLists.txt passes the compile checks'
# sources) is listed by none of its components: ESP-IDF would not build it, and the link fails.
#   cmake -DEMCP_SOURCE_DIR=<repo> -P tests/esp32/check_project.cmake          (every example)
#   cmake -DEMCP_SOURCE_DIR=<repo> -DEMCP_ESP32_PROJECT=sensors_net -P ...     (one of them)
# (ESP-IDF names a component after its folder: boards/esp32/emcp is the component "emcp".)
set(ENV{IDF_PATH} ${CMAKE_CURRENT_LIST_DIR}/idf)  # a stand-in tools/cmake/project.cmake
# The ESP-IDF components the code uses.
set(idf_components driver esp_timer esp_hw_support freertos lwip esp_netif esp_wifi esp_event nvs_flash
    mbedtls)

function(idf_component_register)
  cmake_parse_arguments(arg "" "" "SRCS;INCLUDE_DIRS;REQUIRES" ${ARGN})
  get_filename_component(name ${CMAKE_CURRENT_LIST_DIR} NAME)
  foreach(src ${arg_SRCS})
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_LIST_DIR}/${src})
    endif()
    if(NOT EXISTS ${src} OR IS_DIRECTORY ${src})
      message(FATAL_ERROR "component ${name}: source ${src} does not exist")
    endif()
    file(REAL_PATH ${src} src)
    list(APPEND listed ${src})
  endforeach()
  foreach(dir ${arg_INCLUDE_DIRS})
    if(NOT IS_ABSOLUTE ${dir})
      set(dir ${CMAKE_CURRENT_LIST_DIR}/${dir})
    endif()
    if(NOT IS_DIRECTORY ${dir})
      message(FATAL_ERROR "component ${name}: include folder ${dir} does not exist")
    endif()
  endforeach()
  list(LENGTH arg_SRCS n)
  message(STATUS "component ${name}: ${n} sources, requires ${arg_REQUIRES}")
  set(components ${components} ${name} PARENT_SCOPE)
  set(required ${required} ${arg_REQUIRES} PARENT_SCOPE)
  set(listed ${listed} PARENT_SCOPE)
  set(COMPONENT_LIB __idf_${name} PARENT_SCOPE)
endfunction()
# Project commands have no meaning in script mode: accepted and ignored.
function(project)
endfunction()
function(target_compile_options)
endfunction()
# A component's public (and interface) definitions, which every component requiring it gets.
function(target_compile_definitions target)
  cmake_parse_arguments(arg "" "" "PUBLIC;PRIVATE;INTERFACE" ${ARGN})
  get_filename_component(name ${CMAKE_CURRENT_LIST_DIR} NAME)
  set(public_definitions_${name} ${public_definitions_${name}} ${arg_PUBLIC} ${arg_INTERFACE} PARENT_SCOPE)
endfunction()

# One project: its components (each idf_component_register above adds to this function's
# `components` and `required`) and what they require.
function(check_project project_dir)
  set(components "")
  set(required "")
  set(public_definitions_emcp "")
  set(listed "")
  set(EXTRA_COMPONENT_DIRS "")
  include(${project_dir}/CMakeLists.txt)
  if(NOT EXTRA_COMPONENT_DIRS)
    message(FATAL_ERROR "${project_dir} names no EXTRA_COMPONENT_DIRS")
  endif()
  foreach(dir ${EXTRA_COMPONENT_DIRS})
    if(NOT EXISTS ${dir}/CMakeLists.txt OR NOT EXISTS ${dir}/idf_component.yml)
      message(FATAL_ERROR "${dir} is not a component (CMakeLists.txt and idf_component.yml)")
    endif()
    include(${dir}/CMakeLists.txt)
  endforeach()
  include(${project_dir}/main/CMakeLists.txt)
  foreach(req ${required})
    if(NOT req IN_LIST components AND NOT req IN_LIST idf_components)
      message(FATAL_ERROR "${project_dir}: a component requires \"${req}\", which is neither in the "
                          "project (${components}) nor one of ESP-IDF's (${idf_components})")
    endif()
  endforeach()
  if("emcp" IN_LIST components AND NOT "EMCP_BOARD_RTOS=1" IN_LIST public_definitions_emcp)
    message(FATAL_ERROR "component emcp must define EMCP_BOARD_RTOS=1 PUBLIC (target_compile_definitions): "
                        "every component using it is built for FreeRTOS (ports/freertos/src/owner.cpp)")
  endif()
  # emcp_net calls lwIP's raw API from the application's task: ESP-IDF's lwIP must have its core
  # lock (net.cpp's static_assert says the same at build time, on ESP-IDF).
  if("emcp_net" IN_LIST components)
    set(defaults ${project_dir}/sdkconfig.defaults)
    if(NOT EXISTS ${defaults})
      message(FATAL_ERROR "${project_dir} uses emcp_net but has no sdkconfig.defaults "
                          "(CONFIG_LWIP_TCPIP_CORE_LOCKING=y is required)")
    endif()
    file(STRINGS ${defaults} locking REGEX "^CONFIG_LWIP_TCPIP_CORE_LOCKING=y$")
    if(NOT locking)
      message(FATAL_ERROR "${defaults} must set CONFIG_LWIP_TCPIP_CORE_LOCKING=y (emcp_net)")
    endif()
  endif()
  get_filename_component(project_name ${project_dir} NAME)
  string(REPLACE "|" ";" checked_sources "${EMCP_ESP32_SOURCES_${project_name}}")
  foreach(src ${checked_sources})
    file(REAL_PATH ${src} src)
    if(NOT src IN_LIST listed)
      message(FATAL_ERROR "${project_dir}: ${src} is type-checked for this project by the native build, "
                          "but none of its components lists it (SRCS of idf_component_register)")
    endif()
  endforeach()
  list(LENGTH checked_sources n)
  message(STATUS "boards/esp32/examples/${project_name}: components ${components} resolve; "
                 "they list the ${n} sources type-checked for it")
endfunction()

if(EMCP_ESP32_PROJECT)
  set(projects ${EMCP_SOURCE_DIR}/boards/esp32/examples/${EMCP_ESP32_PROJECT})
else()
  file(GLOB projects LIST_DIRECTORIES true ${EMCP_SOURCE_DIR}/boards/esp32/examples/*)
endif()
set(checked 0)
foreach(project_dir ${projects})
  if(EXISTS ${project_dir}/CMakeLists.txt)
    check_project(${project_dir})
    math(EXPR checked "${checked} + 1")
  elseif(EMCP_ESP32_PROJECT)
    message(FATAL_ERROR "${project_dir} is not an ESP-IDF project (no CMakeLists.txt)")
  endif()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no ESP-IDF project under ${EMCP_SOURCE_DIR}/boards/esp32/examples")
endif()
