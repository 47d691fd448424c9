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

/* lib (a soname) opened, RTLD_NOW | RTLD_LOCAL, never closed, and the
 * pointers of table at syms[n]'s offsets filled with each looked up in it
 * (one table may take several libraries' functions): its handle; or NULL
 * with why[len] saying what failed (the table then partly filled: not to
 * be used). */
void *dl_table(const char *lib, const struct dl_sym *syms, size_t n, void *table, char *why,
	       size_t len);
#define DL_TABLE(lib, syms, table, why) \
	dl_table(lib, syms, sizeof(syms) / sizeof((syms)[0]), &(table), why, sizeof(why))

#endif
