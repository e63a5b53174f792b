// An application's configuration (tests/config/page_size.cpp): options that are not about the
// layout of any type, which only code compiled inside the core applies.
#ifndef EMCP_CONFIG_H
#define EMCP_CONFIG_H

#define EMCP_PAGE_SIZE 2          // tools/list pages (Server's constructor, in core)
#define EMCP_ERROR_STRINGS 0      // error texts (written by core code)

#endif
