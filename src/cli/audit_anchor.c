/*
 * toolgate audit verify FILE --store URL [--replica NAME]: a replica's
 * audit log checked against the heads its gateway anchored in the shared
 * store (docs/AUDIT.md, "Replicas and anchors"). The chain alone cannot
 * tell a log cut back at its end from one that ended there: the store
 * can, since the gateway noted its head every two seconds. The anchor of
 * this log (its chain: its first record's hash) must be in it, as that
 * record with that hash; the replica's latest anchor being of another log
 * is said too (this log is not the one the replica writes now).
 *
 * Owns: nothing past a call. Must never: change the store or the log.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "toolgate/audit.h"
#include "toolgate/store.h"

/* The replica the log's first record names, into out: 0, or -1. */
static int replica_of(const char *path, char *out, size_t len)
{
	char *line = malloc(TG_AUDIT_RECORD_MAX + 1024);
	FILE *f = fopen(path, "re");
	json_t *o = NULL;
	const char *r;
	int rc = -1;

	if (f && line && fgets(line, TG_AUDIT_RECORD_MAX + 1024, f) &&
	    (o = json_loads(line, 0, NULL)) &&
	    (r = json_string_value(json_object_get(o, "replica"))) && strlen(r) < len) {
		snprintf(out, len, "%s", r);
		rc = 0;
	}
	json_decref(o);
	free(line);
	if (f)
		fclose(f);
	return rc;
}

static void when(int64_t at, char *out, size_t len)
{
	time_t t = (time_t)at;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, len, "%lld", (long long)at);
}

/* The log at path (whose chain verified: rep) against its anchor: 0 it
 * reaches it, 1 it does not (said). */
static int against(const char *path, const struct tg_audit_report *rep,
		   const struct tg_audit_anchor *an)
{
	struct tg_audit_head head = { .seq = an->seq };
	struct tg_audit_report again;
	struct tg_error err = { 0 }; /* tg_audit_verify sets it only when it fails */
	char at[32];

	when(an->at, at, sizeof(at));
	memcpy(head.hash, an->hash, sizeof(head.hash));
	if (an->seq > rep->last_seq) {
		printf("%s: cut: the log ends at record %llu, but replica %s anchored record %llu "
		       "of it at %s: %llu record(s) removed from its end\n", path,
		       (unsigned long long)rep->last_seq, an->replica,
		       (unsigned long long)an->seq, at,
		       (unsigned long long)(an->seq - rep->last_seq));
		return 1;
	}
	if (tg_audit_verify(path, &head, &again, &err) < 0 || again.head != 1) {
		printf("%s: record %llu is not the one replica %s anchored at %s (%s): the log was "
		       "rewritten\n", path, (unsigned long long)an->seq, an->replica, at,
		       err.code ? err.msg : "another hash");
		return 1;
	}
	printf("%s: reaches its anchor in the store, record %llu (%s)\n", path,
	       (unsigned long long)an->seq, at);
	return 0;
}

int cli_audit_anchored(const char *path, const struct tg_audit_report *rep, const char *store,
		       const char *replica)
{
	struct tg_audit_anchor *an = NULL;
	struct tg_store *st = NULL;
	struct tg_error err;
	char name[64], at[32];
	size_t n = 0, i;
	int rc = EXIT_DATA;

	if (!replica && replica_of(path, name, sizeof(name)) < 0) {
		fprintf(stderr, "toolgate audit verify: %s names no replica in its first record: "
			"give --replica NAME\n", path);
		return EXIT_USAGE;
	}
	if (tg_store_open(store, &st, &err) < 0 ||
	    tg_store_anchors(st, replica ? replica : name, 64, &an, &n, &err) < 0) {
		fprintf(stderr, "toolgate audit verify: %s\n", err.msg);
		goto out;
	}
	rc = 1;
	if (n == 0) {
		printf("%s: the store holds no anchor of replica %s\n", path,
		       replica ? replica : name);
		goto out;
	}
	for (i = 0; i < n && strcmp(an[i].chain, rep->first_hash) != 0; i++)
		;
	if (i == n) {
		when(an[0].at, at, sizeof(at));
		printf("%s: not anchored: replica %s's anchors are of other logs (the latest "
		       "begins with record hash %.16s..., up to record %llu at %s)\n", path,
		       an[0].replica, an[0].chain, (unsigned long long)an[0].seq, at);
		goto out;
	}
	rc = against(path, rep, &an[i]);
	if (i > 0) {
		when(an[0].at, at, sizeof(at));
		printf("%s: replica %s has written another log since (anchored up to record %llu "
		       "at %s): this one is not the log it writes now\n", path, an[0].replica,
		       (unsigned long long)an[0].seq, at);
		rc = 1;
	}
out:
	free(an);
	tg_store_close(st);
	return rc;
}
