/*
 * Optional libraries loaded when first used (src/util/curl.c, mhd.c,
 * crypto.c): a table of function pointers filled from dlsym.
 */
#ifndef TG_UTIL_DL_H
#define TG_UTIL_DL_H

#include <stddef.h>

/* One function of a table: its symbol and its pointer's offset. */
struct dl_sym {
	const char *name;
	size_t offset;
};

/* lib (a soname) opened, RTLD_NOW | RTLD_LOCAL, never closed: its handle,
 * or NULL with why[len] saying why. */
void *dl_open(const char *lib, char *why, size_t len);
/* Each of syms[n] looked up in h (lib's) into table: 0; or -1 with why
 * naming the first missing, the table partly filled (not to be used). */
int dl_fill(void *h, const char *lib, const struct dl_sym *syms, size_t n, void *table,
	    char *why, size_t len);

#endif
