/*
 * libpq (libpq.so.5), loaded the first time a PostgreSQL store is opened
 * (src/store/pg.c), as SQLite is (src/util/sqlite.h): a gateway on the
 * embedded store never maps it. Include this instead of <libpq-fe.h>: the
 * PQ functions below are libpq's, through the pointers tg_pq_load filled,
 * and each is called only on a store pg_open opened, which loads the
 * library first.
 */
#ifndef TG_UTIL_PQ_H
#define TG_UTIL_PQ_H

#include <libpq-fe.h>

#include "toolgate/error.h"

/* each the pointer of its function's own type, as the header declares it */
struct tg_pq_api {
	__typeof__(PQclear) *clear;
	__typeof__(PQcmdStatus) *cmdStatus;
	__typeof__(PQcmdTuples) *cmdTuples;
	__typeof__(PQconninfoFree) *conninfoFree;
	__typeof__(PQconninfoParse) *conninfoParse;
	__typeof__(PQconnectdbParams) *connectdbParams;
	__typeof__(PQconsumeInput) *consumeInput;
	__typeof__(PQerrorMessage) *errorMessage;
	__typeof__(PQexec) *exec;
	__typeof__(PQexecParams) *execParams;
	__typeof__(PQfinish) *finish;
	__typeof__(PQfreemem) *freemem;
	__typeof__(PQgetisnull) *getisnull;
	__typeof__(PQgetlength) *getlength;
	__typeof__(PQgetvalue) *getvalue;
	__typeof__(PQnotifies) *notifies;
	__typeof__(PQntuples) *ntuples;
	__typeof__(PQresultErrorField) *resultErrorField;
	__typeof__(PQresultErrorMessage) *resultErrorMessage;
	__typeof__(PQresultStatus) *resultStatus;
	__typeof__(PQserverVersion) *serverVersion;
	__typeof__(PQsetNoticeProcessor) *setNoticeProcessor;
	__typeof__(PQsocket) *socket;
	__typeof__(PQstatus) *status;
	__typeof__(PQtransactionStatus) *transactionStatus;
};
extern struct tg_pq_api tg_pq;

/* libpq.so.5 loaded, once a process, thread-safe: 0; or -1 and err
 * saying it could not be and what needs it (what: the store). */
int tg_pq_load(const char *what, struct tg_error *err);

#define PQclear tg_pq.clear
#define PQcmdStatus tg_pq.cmdStatus
#define PQcmdTuples tg_pq.cmdTuples
#define PQconninfoFree tg_pq.conninfoFree
#define PQconninfoParse tg_pq.conninfoParse
#define PQconnectdbParams tg_pq.connectdbParams
#define PQconsumeInput tg_pq.consumeInput
#define PQerrorMessage tg_pq.errorMessage
#define PQexec tg_pq.exec
#define PQexecParams tg_pq.execParams
#define PQfinish tg_pq.finish
#define PQfreemem tg_pq.freemem
#define PQgetisnull tg_pq.getisnull
#define PQgetlength tg_pq.getlength
#define PQgetvalue tg_pq.getvalue
#define PQnotifies tg_pq.notifies
#define PQntuples tg_pq.ntuples
#define PQresultErrorField tg_pq.resultErrorField
#define PQresultErrorMessage tg_pq.resultErrorMessage
#define PQresultStatus tg_pq.resultStatus
#define PQserverVersion tg_pq.serverVersion
#define PQsetNoticeProcessor tg_pq.setNoticeProcessor
#define PQsocket tg_pq.socket
#define PQstatus tg_pq.status
#define PQtransactionStatus tg_pq.transactionStatus

#endif
