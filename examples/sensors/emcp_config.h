// Configuration of the sensors example (see emcp/opt.h for every option and its default).
#ifndef EMCP_CONFIG_H
#define EMCP_CONFIG_H

// Requests of MCP clients are small; 4 KiB of arena holds any of this server's requests with
// room to spare (tools/call with arguments: ~300 B) and the client's sampling answers. A board
// short of RAM builds it with less (boards/microbit: -DEMCP_ARENA_SIZE=2048).
#ifndef EMCP_ARENA_SIZE
#define EMCP_ARENA_SIZE 4096
#endif

#endif
