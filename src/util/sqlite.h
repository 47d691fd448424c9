/*
 * SQLite (libsqlite3.so.0), loaded the first time a state directory's
 * store is opened (src/store/sqlite.c), as libmicrohttpd is
 * (src/util/mhd.h): a command that keeps no state (`toolgate run`, a
 * catalogue's lint) never maps it, and mapping it cost every start 17
 * page faults of some 130 (docs/BENCHMARKS.md, "Start alone"). Include
 * this instead of <sqlite3.h>: the sqlite3_ functions below are SQLite's,
 * through the pointers tg_sqlite_load filled. Every one of them is
 * called only on a store sq_open opened, which loads the library first:
 * nothing calls one before the load said yes.
 */
#ifndef TG_UTIL_SQLITE_H
#define TG_UTIL_SQLITE_H

#include <sqlite3.h>

#include "toolgate/error.h"

/* each the pointer of its function's own type, as the header declares it */
struct tg_sqlite_api {
	__typeof__(sqlite3_bind_blob) *bind_blob;
	__typeof__(sqlite3_bind_double) *bind_double;
	__typeof__(sqlite3_bind_int64) *bind_int64;
	__typeof__(sqlite3_bind_parameter_count) *bind_parameter_count;
	__typeof__(sqlite3_bind_text) *bind_text;
	__typeof__(sqlite3_busy_timeout) *busy_timeout;
	__typeof__(sqlite3_changes) *changes;
	__typeof__(sqlite3_close) *close;
	__typeof__(sqlite3_column_blob) *column_blob;
	__typeof__(sqlite3_column_bytes) *column_bytes;
	__typeof__(sqlite3_column_double) *column_double;
	__typeof__(sqlite3_column_int) *column_int;
	__typeof__(sqlite3_column_int64) *column_int64;
	__typeof__(sqlite3_column_text) *column_text;
	__typeof__(sqlite3_errcode) *errcode;
	__typeof__(sqlite3_errmsg) *errmsg;
	__typeof__(sqlite3_exec) *exec;
	__typeof__(sqlite3_extended_result_codes) *extended_result_codes;
	__typeof__(sqlite3_finalize) *finalize;
	__typeof__(sqlite3_free) *free;
	__typeof__(sqlite3_get_autocommit) *get_autocommit;
	__typeof__(sqlite3_open_v2) *open_v2;
	__typeof__(sqlite3_prepare_v2) *prepare_v2;
	__typeof__(sqlite3_reset) *reset;
	__typeof__(sqlite3_sleep) *sleep;
	__typeof__(sqlite3_step) *step;
};
extern struct tg_sqlite_api tg_sqlite;

/* libsqlite3.so.0 loaded, once a process, thread-safe: 0; or -1 and err
 * saying it could not be and what needs it (what: the state directory). */
int tg_sqlite_load(const char *what, struct tg_error *err);

#define sqlite3_bind_blob tg_sqlite.bind_blob
#define sqlite3_bind_double tg_sqlite.bind_double
#define sqlite3_bind_int64 tg_sqlite.bind_int64
#define sqlite3_bind_parameter_count tg_sqlite.bind_parameter_count
#define sqlite3_bind_text tg_sqlite.bind_text
#define sqlite3_busy_timeout tg_sqlite.busy_timeout
#define sqlite3_changes tg_sqlite.changes
#define sqlite3_close tg_sqlite.close
#define sqlite3_column_blob tg_sqlite.column_blob
#define sqlite3_column_bytes tg_sqlite.column_bytes
#define sqlite3_column_double tg_sqlite.column_double
#define sqlite3_column_int tg_sqlite.column_int
#define sqlite3_column_int64 tg_sqlite.column_int64
#define sqlite3_column_text tg_sqlite.column_text
#define sqlite3_errcode tg_sqlite.errcode
#define sqlite3_errmsg tg_sqlite.errmsg
#define sqlite3_exec tg_sqlite.exec
#define sqlite3_extended_result_codes tg_sqlite.extended_result_codes
#define sqlite3_finalize tg_sqlite.finalize
#define sqlite3_free tg_sqlite.free
#define sqlite3_get_autocommit tg_sqlite.get_autocommit
#define sqlite3_open_v2 tg_sqlite.open_v2
#define sqlite3_prepare_v2 tg_sqlite.prepare_v2
#define sqlite3_reset tg_sqlite.reset
#define sqlite3_sleep tg_sqlite.sleep
#define sqlite3_step tg_sqlite.step

#endif
