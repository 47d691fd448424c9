/*
 * The approval console's static files, compiled in by tools/embed.c from
 * console/ (docs/CONSOLE.md).
 */
#ifndef TG_MCP_CONSOLE_FILES_H
#define TG_MCP_CONSOLE_FILES_H

#include <stddef.h>

struct console_file {
	const char *name;            /* under /console/: "index.html", "app.js" ... */
	const char *type;            /* its Content-Type */
	const unsigned char *data;
	size_t len;
	const char *etag;            /* a strong ETag, quoted */
};

/* The files, ended by one whose name is NULL. */
extern const struct console_file console_files[];

#endif
