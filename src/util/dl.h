/*
 * Libraries loaded when first used (src/util/crypto.c, curl.c, mhd.c,
 * pcre2.c, sodium.c, sqlite.c, yaml.c; src/sandbox/seccomp.c, libseccomp;
 * src/cli/config.c, libinih): a table of function pointers (or of a
 * library's variables' addresses) filled from dlsym, and the loaders' one
 * answer when it could not be.
 */
#ifndef TG_UTIL_DL_H
#define TG_UTIL_DL_H

#include <stddef.h>

#include "toolgate/error.h"

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

/* A loader's answer once its load ran (failed: why it could not, "" when
 * it could): 0; or -1 and err saying "WHAT: LIB could not be loaded
 * (FAILED): install PACKAGE". */
int dl_loaded(const char *failed, const char *what, const char *lib, const char *package,
	      struct tg_error *err);

/* dl_loaded's for a call with no error to give: returns when it was
 * loaded, else says so to the log sink (tg_log_set) and aborts. */
void dl_need(const char *failed, const char *lib, const char *package);

#endif
