# lwIP for ports/lwip, built from Debian's source (`apt-get source lwip`, fetched into the
# build folder by scripts/third-party; nothing of lwIP is committed) with emcp's lwipopts.h
# (ports/lwip/include): NO_SYS, raw/altcp TCP, static pools only.
#
#   EMCP_LWIP_SOURCE_DIR   the unpacked source (default build/third_party/lwip)
#
# emcp_lwip_library(NAME [TCPIP] [PORT_SOURCES files...]): a static library NAME of lwIP's core,
# IPv4 and Ethernet code, its mDNS responder (apps/mdns: empty with LWIP_MDNS_RESPONDER 0), and
# ports/lwip's TCP hooks that lwipopts.h wires into it (src/tcp.cpp: a newer SYN reopens a
# connection in TIME_WAIT) and its announcement over mDNS (src/mdns.cpp, emcp/lwip/mdns.h), so
# that whatever links this lwIP links them (an image that announces nothing links no mDNS code).
# TCPIP: lwIP in its own thread (NO_SYS 0: api/tcpip.c, tcpip_thread), with PORT_SOURCES its
# sys_arch (ports/freertos/lwip/sys_arch.cpp), built as the port's file is.
set(EMCP_LWIP_SOURCE_DIR "${emcp_SOURCE_DIR}/build/third_party/lwip" CACHE PATH
    "lwIP's source (Debian's, from scripts/third-party)")

function(emcp_lwip_library name)
  cmake_parse_arguments(L "TCPIP" "" "PORT_SOURCES" ${ARGN})
  set(dir ${EMCP_LWIP_SOURCE_DIR})
  if(NOT EXISTS ${dir}/src/core/tcp.c)
    message(FATAL_ERROR "lwIP's source is not in EMCP_LWIP_SOURCE_DIR=${dir}: run scripts/third-party "
                        "(scripts/test does), or pass -DEMCP_LWIP_SOURCE_DIR=/path/to/lwip")
  endif()
  # lwIP 2.1's core (src/Filelists.cmake names the same files; it also writes into the source
  # folder, so it is not included), IPv4 and Ethernet.
  set(sources)
  foreach(f init def dns inet_chksum ip mem memp netif pbuf raw stats sys altcp altcp_alloc
            altcp_tcp tcp tcp_in tcp_out timeouts udp)
    list(APPEND sources ${dir}/src/core/${f}.c)
  endforeach()
  foreach(f autoip dhcp etharp icmp igmp ip4_frag ip4 ip4_addr)
    list(APPEND sources ${dir}/src/core/ipv4/${f}.c)
  endforeach()
  list(APPEND sources ${dir}/src/netif/ethernet.c ${dir}/src/apps/mdns/mdns.c)
  if(L_TCPIP)
    list(APPEND sources ${dir}/src/api/tcpip.c)
  endif()
  set(port ${emcp_SOURCE_DIR}/ports/lwip/src/tcp.cpp ${emcp_SOURCE_DIR}/ports/lwip/src/mdns.cpp ${L_PORT_SOURCES})
  add_library(${name} STATIC ${sources} ${port})
  target_include_directories(${name} SYSTEM PUBLIC ${dir}/src/include)
  target_include_directories(${name} PUBLIC ${emcp_SOURCE_DIR}/ports/lwip/include)
  # Third-party code: its own warnings are not ours to fix (-w), but it is built with the
  # target's code generation flags like everything else. The port's file is ours: emcp's
  # flags, warnings as errors.
  set_source_files_properties(${sources} PROPERTIES COMPILE_OPTIONS -w)
  set_source_files_properties(${port} PROPERTIES COMPILE_OPTIONS "$<TARGET_PROPERTY:emcp_flags,INTERFACE_COMPILE_OPTIONS>")
endfunction()
