// Configuration of the echo example (see emcp/opt.h for every option and its default).
#ifndef EMCP_CONFIG_H
#define EMCP_CONFIG_H

// 8 KiB of arena: echoes params trees of a few hundred values.
#define EMCP_ARENA_SIZE 8192

#endif
