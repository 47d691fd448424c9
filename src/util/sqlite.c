/*
 * SQLite loaded with dlopen the first time a store is opened
 * (src/util/sqlite.h), as libmicrohttpd is (src/util/mhd.c).
 *
 * Owns: the table of its functions. Must never: be used before
 * tg_sqlite_load said yes (the pointers are NULL until then), or unload.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/dl.h"
#include "util/sqlite.h"

#define LIBSQLITE "libsqlite3.so.0"

struct tg_sqlite_api tg_sqlite;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static const struct dl_sym syms[] = {
#define S(f) { "sqlite3_" #f, offsetof(struct tg_sqlite_api, f) }
	S(bind_blob), S(bind_double), S(bind_int64), S(bind_parameter_count), S(bind_text),
	S(busy_timeout), S(changes), S(close), S(column_blob), S(column_bytes), S(column_double),
	S(column_int), S(column_int64), S(column_text), S(errcode), S(errmsg), S(exec),
	S(extended_result_codes), S(finalize), S(free), S(get_autocommit), S(open_v2),
	S(prepare_v2), S(reset), S(sleep), S(step),
#undef S
};

static void load(void)
{
	struct tg_sqlite_api api = { 0 };

	if (DL_TABLE(LIBSQLITE, syms, api, failed))
		tg_sqlite = api;
}

int tg_sqlite_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "SQLite", "libsqlite3-0", err);
}
