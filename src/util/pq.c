/*
 * libpq loaded with dlopen the first time a PostgreSQL store is opened
 * (src/util/pq.h), as SQLite is (src/util/sqlite.c).
 *
 * Owns: the table of its functions. Must never: be used before tg_pq_load
 * said yes (the pointers are NULL until then), or unload.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/dl.h"
#include "util/pq.h"

#define LIBPQ "libpq.so.5"

struct tg_pq_api tg_pq;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static const struct dl_sym syms[] = {
#define S(f) { "PQ" #f, offsetof(struct tg_pq_api, f) }
	S(clear), S(cmdStatus), S(cmdTuples), S(conninfoFree), S(conninfoParse), S(connectdbParams),
	S(consumeInput), S(errorMessage), S(exec), S(execParams), S(finish), S(freemem),
	S(getisnull), S(getlength), S(getvalue), S(notifies), S(ntuples), S(resultErrorField),
	S(resultErrorMessage), S(resultStatus), S(serverVersion), S(setNoticeProcessor), S(socket), S(status),
	S(transactionStatus),
#undef S
};

static void load(void)
{
	struct tg_pq_api api = { 0 };

	if (DL_TABLE(LIBPQ, syms, api, failed))
		tg_pq = api;
}

int tg_pq_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "PostgreSQL's client library", "libpq5", err);
}
