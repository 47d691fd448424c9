/* toolgate's version: what `toolgate --version` prints and MCP's serverInfo
 * carries. */
#ifndef TOOLGATE_VERSION_H
#define TOOLGATE_VERSION_H

#define TOOLGATE_VERSION "0.3.0"

#endif
