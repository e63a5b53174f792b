// The consumer project's configuration: small pages of tools (applied by emcp's core).
#ifndef EMCP_CONFIG_H
#define EMCP_CONFIG_H
#define EMCP_PAGE_SIZE 2
#endif
