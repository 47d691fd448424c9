/*
 * Unit tests: the audit log (src/obs/audit.c). Records from several
 * threads and two handles (as two processes would) make one chain; each
 * kind of tampering (an edit, a removal, an insertion, a reordering, a
 * replaced record re-hashed) is named at its first bad line; a torn last
 * line is cut on open and said so; a log whose last record was tampered
 * with is refused; the hash is SHA-256 of the line up to its hash.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "obs/audit.h"
#include "toolgate/audit.h"
#include "unit.h"

#define LINES_MAX 512

/* The file's lines (malloc'd, newline kept), their count in *n. */
static int load_lines(const char *path, char **lines, int *n)
{
	FILE *f = fopen(path, "re");
	char buf[8192];

	*n = 0;
	if (!f)
		return -1;
	while (*n < LINES_MAX && fgets(buf, sizeof(buf), f))
		lines[(*n)++] = strdup(buf);
	fclose(f);
	return 0;
}

static int save_lines(const char *path, char **lines, int n)
{
	FILE *f = fopen(path, "we");
	int i;

	if (!f)
		return -1;
	for (i = 0; i < n; i++)
		fputs(lines[i], f);
	return fclose(f);
}

static void free_lines(char **lines, int n)
{
	while (n-- > 0)
		free(lines[n]);
}

static int append_n(struct tg_audit *a, int from, int n)
{
	struct tg_error err;
	int64_t t = 0;
	int i;

	for (i = from; i < from + n; i++) {
		char rec[128];

		snprintf(rec, sizeof(rec), "{\"kind\":\"test\",\"i\":%d,\"note\":\"a \\\"quoted\\\" "
			 ",\\\"hash\\\":\\\"x\\\"\"}", i);
		t = tg_audit_append(a, rec, &err);
		if (t < 0) {
			fprintf(stderr, "append: %s\n", err.msg);
			return -1;
		}
	}
	return t > 0 ? tg_audit_wait(a, t, &err) : 0;
}

struct thr {
	struct tg_audit *a;
	int from;
	int rc;
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;

	t->rc = append_n(t->a, t->from, 50);
	return NULL;
}

/* Records each written before the next is made (tg_audit_record): the
 * callers write their own groups, or join the one being written. */
static void *thr_record(void *arg)
{
	struct thr *t = arg;
	struct tg_error err;
	char rec[64];
	int i;

	for (i = t->from; i < t->from + 50 && t->rc == 0; i++) {
		snprintf(rec, sizeof(rec), "{\"kind\":\"test\",\"i\":%d}", i);
		t->rc = tg_audit_record(t->a, rec, &err);
	}
	return NULL;
}

/* What verify says of path: the bad line (0: none), and its problem. */
static uint64_t bad_line(const char *path, char *problem, size_t len)
{
	struct tg_audit_report rep;
	struct tg_error err;

	if (tg_audit_verify(path, NULL, &rep, &err) < 0) {
		snprintf(problem, len, "%s", err.msg);
		return (uint64_t)-1;
	}
	snprintf(problem, len, "%s", rep.problem);
	return rep.bad_line;
}

static int chain(void)
{
	char dir[64], path[128], prob[512];
	struct tg_audit *a, *b;
	struct tg_audit_report rep;
	struct tg_audit_stats st;
	struct tg_error err;
	struct thr t[4];
	pthread_t th[4];
	char *lines[LINES_MAX];
	int i, n;

	CHECK(unit_tmpdir(dir, "audit") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	CHECK(tg_audit_open(path, 0, &a, &err) == 0);
	for (i = 0; i < 4; i++) {
		t[i].a = a;
		t[i].from = i * 1000;
		CHECK(pthread_create(&th[i], NULL, thr_main, &t[i]) == 0);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(t[i].rc == 0);
	}
	tg_audit_get_stats(a, &st);
	CHECK(st.records == 200 && st.last_seq == 200 && st.groups >= 1 && st.groups <= 200);
	/* a second handle on the same file, as another process: one chain */
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &b, &err) == 0);
	CHECK(append_n(b, 5000, 3) == 0 && append_n(a, 6000, 3) == 0 && append_n(b, 7000, 1) == 0);
	tg_audit_close(b);
	tg_audit_close(a);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0);
	CHECK(rep.bad_line == 0 && rep.records == 207 && rep.last_seq == 207);
	/* reopened, the chain goes on */
	CHECK(tg_audit_open(path, 0, &a, &err) == 0 && append_n(a, 8000, 1) == 0);
	tg_audit_close(a);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0 && rep.last_seq == 208);
	/* each line is JSON, and its hash SHA-256 of its bytes up to ,"hash": */
	CHECK(load_lines(path, lines, &n) == 0 && n == 208);
	for (i = 0; i < n; i++) {
		json_t *o = json_loads(lines[i], 0, NULL);
		const char *h = json_string_value(json_object_get(o, "hash"));
		char *mark = strstr(lines[i], ",\"hash\":\"");
		unsigned char d[crypto_hash_sha256_BYTES];
		char hex[65];

		CHECK(o && h && json_integer_value(json_object_get(o, "seq")) == i + 1);
		while (mark && strstr(mark + 1, ",\"hash\":\""))
			mark = strstr(mark + 1, ",\"hash\":\"");
		CHECK(mark);
		crypto_hash_sha256(d, (unsigned char *)lines[i], (size_t)(mark - lines[i]));
		sodium_bin2hex(hex, sizeof(hex), d, sizeof(d));
		CHECK(strcmp(hex, h) == 0);
		json_decref(o);
	}
	free_lines(lines, n);
	CHECK(bad_line(path, prob, sizeof(prob)) == 0);
	/* callers that write their own groups, the log's thread too (a
	 * record nobody waits for): one chain, every record there */
	CHECK(tg_audit_open(path, 0, &a, &err) == 0);
	for (i = 0; i < 4; i++) {
		t[i].a = a;
		t[i].from = 10000 + i * 1000;
		t[i].rc = 0;
		CHECK(pthread_create(&th[i], NULL, thr_record, &t[i]) == 0);
	}
	CHECK(tg_audit_append(a, "{\"kind\":\"unwaited\"}", &err) > 0);
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		CHECK(t[i].rc == 0);
	}
	tg_audit_get_stats(a, &st);
	CHECK(st.records >= 200 && st.records <= 201 && st.groups >= 1 && st.groups <= st.records);
	tg_audit_close(a);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0);
	CHECK(rep.bad_line == 0 && rep.records == 208 + 201 && rep.last_seq == 208 + 201);
	unit_rmtree(dir);
	return 0;
}

/* Write lines to path, verify, and return the first bad line. */
static uint64_t tampered(const char *path, char **lines, int n, char *prob, size_t len)
{
	if (save_lines(path, lines, n) < 0)
		return (uint64_t)-1;
	return bad_line(path, prob, len);
}

static int tamper(void)
{
	char dir[64], path[128], bad[160], prob[512], *lines[LINES_MAX], *copy[LINES_MAX], *p;
	struct tg_audit *a;
	struct tg_error err;
	int n, i;

	CHECK(unit_tmpdir(dir, "audit-t") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	snprintf(bad, sizeof(bad), "%s/bad.log", dir);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 10) == 0);
	tg_audit_close(a);
	CHECK(load_lines(path, lines, &n) == 0 && n == 10);

	/* an edit: record 4's field changed */
	memcpy(copy, lines, sizeof(char *) * (size_t)n);
	copy[3] = strdup(lines[3]);
	p = strstr(copy[3], "\"i\":3");
	CHECK(p);
	p[4] = '7';
	CHECK(tampered(bad, copy, n, prob, sizeof(prob)) == 4 && strstr(prob, "edited"));
	free(copy[3]);
	/* a removal: record 5 gone */
	memcpy(copy, lines, sizeof(char *) * (size_t)n);
	memmove(copy + 4, copy + 5, sizeof(char *) * 5);
	CHECK(tampered(bad, copy, n - 1, prob, sizeof(prob)) == 5 && strstr(prob, "removed"));
	/* the first record removed */
	CHECK(tampered(bad, lines + 1, n - 1, prob, sizeof(prob)) == 1 &&
	      strstr(prob, "removed"));
	/* an insertion: record 3 again after record 6 */
	memcpy(copy, lines, sizeof(char *) * 6);
	copy[6] = lines[2];
	memcpy(copy + 7, lines + 6, sizeof(char *) * 4);
	CHECK(tampered(bad, copy, n + 1, prob, sizeof(prob)) == 7 && strstr(prob, "inserted"));
	/* a reordering: records 8 and 9 swapped */
	memcpy(copy, lines, sizeof(char *) * (size_t)n);
	copy[7] = lines[8];
	copy[8] = lines[7];
	CHECK(tampered(bad, copy, n, prob, sizeof(prob)) == 8 && strstr(prob, "removed"));
	/* a record replaced and re-hashed, its seq kept: the next one says so */
	{
		char *mark, hex[65], line[1024];
		unsigned char d[crypto_hash_sha256_BYTES];
		size_t at;

		memcpy(copy, lines, sizeof(char *) * (size_t)n);
		snprintf(line, sizeof(line), "%s", lines[5]);
		p = strstr(line, "\"i\":5");
		CHECK(p);
		p[4] = '9';
		mark = strstr(line, ",\"hash\":\"");
		while (mark && strstr(mark + 1, ",\"hash\":\""))
			mark = strstr(mark + 1, ",\"hash\":\"");
		CHECK(mark);
		at = (size_t)(mark - line);
		crypto_hash_sha256(d, (unsigned char *)line, at);
		sodium_bin2hex(hex, sizeof(hex), d, sizeof(d));
		snprintf(line + at, sizeof(line) - at, ",\"hash\":\"%s\"}\n", hex);
		copy[5] = line;
		CHECK(tampered(bad, copy, n, prob, sizeof(prob)) == 7 &&
		      strstr(prob, "does not follow"));
	}
	/* not a record at all */
	memcpy(copy, lines, sizeof(char *) * (size_t)n);
	copy[2] = "{\"seq\":3}\n";
	CHECK(tampered(bad, copy, n, prob, sizeof(prob)) == 3 && strstr(prob, "not a record"));
	/* the whole log intact still verifies */
	CHECK(tampered(bad, lines, n, prob, sizeof(prob)) == 0);

	/* a log whose last record was tampered with is not opened */
	memcpy(copy, lines, sizeof(char *) * (size_t)n);
	copy[9] = strdup(lines[9]);
	p = strstr(copy[9], "\"i\":9");
	CHECK(p);
	p[4] = '1';
	CHECK(save_lines(bad, copy, n) == 0);
	free(copy[9]);
	CHECK(tg_audit_open(bad, 0, &a, &err) < 0 && strstr(err.msg, "does not verify"));
	for (i = 0; i < n; i++)
		free(lines[i]);
	unit_rmtree(dir);
	return 0;
}

/* A torn last line (power lost mid-write) is cut when the log opens, and
 * a record says how much; verify names it before. */
static int torn(void)
{
	char dir[64], path[128], prob[512], *lines[LINES_MAX];
	struct tg_audit *a;
	struct tg_audit_report rep;
	struct tg_error err;
	int fd, n;

	CHECK(unit_tmpdir(dir, "audit-c") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 3) == 0);
	tg_audit_close(a);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "{\"seq\":4,\"ts\":\"20", 17) == 17);
	close(fd);
	CHECK(bad_line(path, prob, sizeof(prob)) == 4 && strstr(prob, "torn"));
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 10, 1) == 0);
	tg_audit_close(a);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0 && rep.last_seq == 5);
	CHECK(load_lines(path, lines, &n) == 0 && n == 5);
	CHECK(strstr(lines[3], "\"kind\":\"audit_recovered\",\"cut_bytes\":17"));
	free_lines(lines, n);

	/* a whole record that lost only its newline gets it back: kept */
	{
		char keep[8192];
		off_t size;

		CHECK(load_lines(path, lines, &n) == 0 && n == 5);
		snprintf(keep, sizeof(keep), "%s", lines[4]);
		keep[strlen(keep) - 1] = '\0';
		lines[4][0] = '\0';
		CHECK(save_lines(path, lines, n) == 0);
		fd = open(path, O_WRONLY | O_APPEND);
		CHECK(fd >= 0 && write(fd, keep, strlen(keep)) == (ssize_t)strlen(keep));
		close(fd);
		free_lines(lines, n);
		CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 20, 1) == 0);
		tg_audit_close(a);
		CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0 &&
		      rep.last_seq == 6);
		/* a whole last record without its newline that was edited is
		 * refused, and not cut */
		{
			char edited[8192], *i7;
			off_t before;

			CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0);
			CHECK(load_lines(path, lines, &n) == 0 && n == 6);
			snprintf(edited, sizeof(edited), "%s", lines[5]);
			edited[strlen(edited) - 1] = '\0';
			i7 = strstr(edited, "\"i\":20");
			CHECK(i7);
			i7[5] = '1';
			lines[5][0] = '\0';
			CHECK(save_lines(path, lines, n) == 0);
			free_lines(lines, n);
			fd = open(path, O_WRONLY | O_APPEND);
			CHECK(fd >= 0 && write(fd, edited, strlen(edited)) == (ssize_t)strlen(edited));
			before = lseek(fd, 0, SEEK_END);
			close(fd);
			CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0 &&
			      strstr(err.msg, "edited"));
			fd = open(path, O_RDONLY);
			CHECK(fd >= 0 && lseek(fd, 0, SEEK_END) == before);
			close(fd);
			/* as it was: the record whole again */
			i7[5] = '0';
			CHECK(truncate(path, before - (off_t)strlen(edited)) == 0);
			fd = open(path, O_WRONLY | O_APPEND);
			CHECK(fd >= 0 && write(fd, edited, strlen(edited)) == (ssize_t)strlen(edited));
			close(fd);
			CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0);
			tg_audit_close(a);
		}
		/* what is not the beginning of the record due next is not cut */
		fd = open(path, O_WRONLY | O_APPEND);
		CHECK(fd >= 0 && write(fd, "hello", 5) == 5);
		size = lseek(fd, 0, SEEK_END);
		close(fd);
		CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0 &&
		      strstr(err.msg, "neither a record nor the beginning"));
		fd = open(path, O_RDONLY);
		CHECK(fd >= 0 && lseek(fd, 0, SEEK_END) == size);
		close(fd);
		/* nor the beginning of another record than the one due */
		CHECK(truncate(path, size - 5) == 0);
		fd = open(path, O_WRONLY | O_APPEND);
		CHECK(fd >= 0 && write(fd, "{\"seq\":9,\"ts", 13) == 13);
		close(fd);
		CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0);
	}
	/* a file with no newline at all, not a log: refused, untouched */
	snprintf(path, sizeof(path), "%s/other", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0 && write(fd, "important data", 14) == 14);
	close(fd);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0);
	CHECK(load_lines(path, lines, &n) == 0 && n == 1 && strcmp(lines[0], "important data") == 0);
	free_lines(lines, n);
	unit_rmtree(dir);
	return 0;
}

/* A log cut, rewritten, or moved under a writer stops it: a new chain in
 * a file that lost the old one would verify clean. Another writer's
 * appends, after ours, are fine. */
static int moved(void)
{
	char dir[64], path[128], aside[128], *lines[LINES_MAX];
	struct tg_audit *a, *b;
	struct tg_audit_report rep;
	struct tg_audit_head head;
	struct tg_error err;
	int n, fd;

	CHECK(unit_tmpdir(dir, "audit-m") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	snprintf(aside, sizeof(aside), "%s/audit.log.1", dir);

	/* cut (truncated by someone): the next group fails, and so the log */
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 3) == 0);
	CHECK(truncate(path, 0) == 0);
	CHECK(append_n(a, 3, 1) < 0);
	CHECK(tg_audit_ok(a, &err) < 0 && strstr(err.msg, "something cut it"));
	tg_audit_close(a);
	CHECK(load_lines(path, lines, &n) == 0 && n == 0);

	/* rewritten in place, its size kept or grown */
	CHECK(unlink(path) == 0);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 3) == 0);
	CHECK(load_lines(path, lines, &n) == 0 && n == 3);
	{
		/* record 3 re-hashed (another content): its hash is not ours */
		char *h = lines[2] + strlen(lines[2]) - 5;

		*h = *h == 'a' ? 'b' : 'a';
	}
	CHECK(save_lines(path, lines, n) == 0);
	free_lines(lines, n);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "{}\n", 3) == 3);
	close(fd);
	CHECK(append_n(a, 3, 1) < 0);
	CHECK(tg_audit_ok(a, &err) < 0 && strstr(err.msg, "no longer where it was written"));
	tg_audit_close(a);

	/* moved aside (rotated), a new file in its place or none */
	CHECK(unlink(path) == 0);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 2) == 0);
	CHECK(rename(path, aside) == 0);
	CHECK(append_n(a, 2, 1) < 0);
	CHECK(tg_audit_ok(a, &err) < 0 && strstr(err.msg, "moved"));
	tg_audit_close(a);
	CHECK(access(path, F_OK) < 0);

	/* a symlink repointed (rotation by link): the name no longer leads
	 * to the file being written */
	{
		char link[160], two[160];

		snprintf(link, sizeof(link), "%s/cur.log", dir);
		snprintf(two, sizeof(two), "%s/two.log", dir);
		CHECK(symlink("two.log", link) == 0);
		CHECK(tg_audit_open(link, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 2) == 0);
		CHECK(unlink(link) == 0 && symlink("three.log", link) == 0);
		CHECK(append_n(a, 2, 1) < 0 && tg_audit_ok(a, &err) < 0 && strstr(err.msg, "moved"));
		tg_audit_close(a);
		CHECK(unlink(link) == 0 && unlink(two) == 0);
	}
	/* another writer's bytes that do not chain on ours stop us */
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 2) == 0);
	CHECK(load_lines(path, lines, &n) == 0 && n == 2);
	fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, lines[0], strlen(lines[0])) == (ssize_t)strlen(lines[0]));
	close(fd);
	free_lines(lines, n);
	CHECK(append_n(a, 2, 1) < 0 && tg_audit_ok(a, &err) < 0 && strstr(err.msg, "successor"));
	tg_audit_close(a);
	CHECK(unlink(path) == 0);
	/* beside a gateway, an empty log is a cut one: not begun again */
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC | TG_AUDIT_NOT_EMPTY, &a, &err) < 0 &&
	      strstr(err.msg, "empty"));
	/* a file that may be written but not read cannot be chained on */
	CHECK(chmod(path, 0200) == 0);
	if (geteuid() != 0) /* root reads it all the same */
		CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0);
	CHECK(unlink(path) == 0);

	/* two writers: each sees the other's records after its own */
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 2) == 0);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &b, &err) == 0 && append_n(b, 2, 2) == 0);
	CHECK(append_n(a, 4, 2) == 0 && append_n(b, 6, 1) == 0 && append_n(a, 7, 1) == 0);
	tg_audit_close(a);
	tg_audit_close(b);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0 &&
	      rep.last_seq == 8);

	/* --expect: a head noted earlier must still be in the log */
	head.seq = 5;
	CHECK(load_lines(path, lines, &n) == 0 && n == 8);
	snprintf(head.hash, sizeof(head.hash), "%s", strstr(lines[4], ",\"hash\":\"") + 9);
	CHECK(tg_audit_verify(path, &head, &rep, &err) == 0 && rep.bad_line == 0 && rep.head == 1);
	CHECK(save_lines(path, lines, 4) == 0);
	CHECK(tg_audit_verify(path, &head, &rep, &err) == 0 && rep.bad_line == 5 &&
	      strstr(rep.problem, "is not there"));
	head.hash[0] = head.hash[0] == 'a' ? 'b' : 'a';
	CHECK(save_lines(path, lines, n) == 0);
	CHECK(tg_audit_verify(path, &head, &rep, &err) == 0 && rep.bad_line == 9 &&
	      strstr(rep.problem, "another hash"));
	free_lines(lines, n);
	unit_rmtree(dir);
	return 0;
}

/* What a record may not be: not an object, the log's own keys, too big. */
static int refused(void)
{
	char dir[64], path[128], *big;
	struct tg_audit *a;
	struct tg_error err;

	CHECK(unit_tmpdir(dir, "audit-r") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0);
	CHECK(tg_audit_append(a, "[1]", &err) < 0 && strstr(err.msg, "not a JSON object"));
	CHECK(tg_audit_append(a, "{\"a\":", &err) < 0 && strstr(err.msg, "not a JSON object"));
	CHECK(tg_audit_append(a, "{\"seq\":1}", &err) < 0 && strstr(err.msg, "\"seq\""));
	CHECK(tg_audit_append(a, "{\"hash\":\"x\"}", &err) < 0);
	CHECK(tg_audit_append(a, "{\"a\":1,\"a\":2}", &err) < 0);
	big = malloc(TG_AUDIT_RECORD_MAX + 64);
	CHECK(big);
	memset(big, 'x', TG_AUDIT_RECORD_MAX + 63);
	memcpy(big, "{\"a\":\"", 6);
	memcpy(big + TG_AUDIT_RECORD_MAX + 61, "\"}", 2);
	big[TG_AUDIT_RECORD_MAX + 63] = '\0';
	CHECK(tg_audit_append(a, big, &err) < 0 && strstr(err.msg, "ceiling"));
	free(big);
	/* a newline inside a string is escaped: still one line */
	CHECK(tg_audit_append(a, "{\"a\":\"two\\nlines\"}", &err) > 0);
	CHECK(tg_audit_ok(a, &err) == 0);
	tg_audit_close(a);
	CHECK(tg_audit_open("", 0, &a, &err) < 0);
	unit_rmtree(dir);
	return 0;
}

/* What an agent chose is written with what a terminal would obey or
 * reorder as JSON escapes: the same values, a chain that verifies; a
 * record that grows past the ceiling so is refused. */
static int escaped(void)
{
	static const char rec[] = "{\"kind\":\"call\",\"tool\":\"fs.read\u202etxt.exe\xc2\x9b"
				  "2J\\u001b]0;x\\u0007\U000E0041\",\"note\":\"\u00e9 ok\"}";
	char dir[64], path[128], *lines[LINES_MAX], *big;
	struct tg_audit_report rep;
	struct tg_audit *a;
	struct tg_error err;
	json_t *o;
	size_t k;
	int n;

	CHECK(unit_tmpdir(dir, "audit-e") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0);
	CHECK(tg_audit_append(a, rec, &err) > 0);
	/* 16,000 tag characters: 64,000 bytes, 192,000 escaped */
	big = malloc(TG_AUDIT_RECORD_MAX);
	CHECK(big);
	memcpy(big, "{\"a\":\"", 6);
	for (k = 6; k < 64000; k += 4)
		memcpy(big + k, "\U000E0041", 4);
	memcpy(big + k, "\"}", 3);
	CHECK(tg_audit_append(a, big, &err) < 0 && strstr(err.msg, "escaped"));
	free(big);
	tg_audit_close(a);
	CHECK(load_lines(path, lines, &n) == 0 && n == 1);
	CHECK(!strstr(lines[0], "\u202e") && !strstr(lines[0], "\xc2\x9b") &&
	      !strchr(lines[0], 0x1b) && !strchr(lines[0], 0x07) && !strstr(lines[0], "\U000E0041"));
	CHECK(strstr(lines[0], "\"tool\":\"fs.read\\u202Etxt.exe\\u009B2J\\u001B]0;x\\u0007"
			       "\\uDB40\\uDC41\""));
	CHECK(strstr(lines[0], "\u00e9 ok")); /* what shows as it is stays so */
	o = json_loads(lines[0], 0, NULL);
	CHECK(o && strcmp(json_string_value(json_object_get(o, "tool")),
			  "fs.read\u202etxt.exe\xc2\x9b" "2J\x1b]0;x\x07\U000E0041") == 0);
	json_decref(o);
	free_lines(lines, n);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0 && rep.records == 1);
	unit_rmtree(dir);
	return 0;
}

/* What the library says of a log that stopped goes to the sink its
 * caller set (tg_log_set), once, never to stderr by itself. */
struct said {
	int n;
	enum tg_log_level level;
	char first[600];
};

static void keep_said(void *ctx, enum tg_log_level level, const char *message)
{
	struct said *s = ctx;

	if (s->n++ == 0) {
		s->level = level;
		snprintf(s->first, sizeof(s->first), "%s", message);
	}
}

static int stop_said(void)
{
	struct said s = { 0 };
	char dir[64], path[128];
	struct tg_audit *a;
	struct tg_error err;

	CHECK(unit_tmpdir(dir, "audit-log") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	tg_log_set(keep_said, &s);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) == 0 && append_n(a, 0, 3) == 0);
	CHECK(s.n == 0);
	CHECK(truncate(path, 0) == 0);
	CHECK(append_n(a, 3, 1) < 0 && append_n(a, 4, 1) < 0);
	CHECK(s.n == 1 && s.level == TG_LOG_ERROR && strstr(s.first, "something cut it") &&
	      strstr(s.first, "the audit log stopped; calls are refused") &&
	      strncmp(s.first, "toolgate", 8) != 0 && !strchr(s.first, '\n'));
	tg_audit_close(a);
	tg_log_set(NULL, NULL);
	unit_rmtree(dir);
	return 0;
}

/* A log past RLIMIT_FSIZE, written by the caller that waits (no thread
 * with every signal blocked between): the log stops, said, the process
 * lives on (SIGXFSZ would end it), and the group is cut back. In a child:
 * the limit is the child's. */
static int file_size_limit(void)
{
	char dir[64], path[128], rec[1100];
	struct tg_audit_report rep;
	struct tg_error err;
	int status;
	pid_t pid;

	CHECK(unit_tmpdir(dir, "audit") == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	snprintf(rec, sizeof(rec), "{\"pad\":\"%01000d\"}", 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = { 4096, 4096 };
		struct tg_audit *a;
		int i, rc = 0;

		if (tg_audit_open(path, 0, &a, &err) < 0 || setrlimit(RLIMIT_FSIZE, &rl) < 0)
			_exit(2);
		for (i = 0; i < 10 && rc == 0; i++)
			rc = tg_audit_record(a, rec, &err);
		tg_audit_close(a);
		_exit(rc < 0 && strstr(err.msg, "File too large") ? 0 : 3);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(tg_audit_verify(path, NULL, &rep, &err) == 0 && rep.bad_line == 0 && rep.records >= 1);
	unit_rmtree(dir);
	return 0;
}

/* The null device is no log: records are checked, never written nor
 * waited for; the gate's own entry makes none. */
static int null_device(void)
{
	struct tg_audit *a;
	struct tg_audit_stats st;
	struct tg_error err;
	json_t *o = json_pack("{s:s}", "kind", "call");
	int64_t t;

	CHECK(o && tg_audit_open("/dev/null", 0, &a, &err) == 0);
	CHECK(audit_discards(a));
	CHECK((t = tg_audit_append(a, "{\"kind\":\"call\"}", &err)) == 0);
	CHECK(tg_audit_wait(a, t, &err) == 0);
	CHECK(tg_audit_record(a, "{\"kind\":\"call\"}", &err) == 0);
	CHECK(audit_record_object(a, o, 1, &err) == 0 && audit_record_object(a, o, 0, &err) == 0);
	/* still checked: what a file would refuse is refused */
	CHECK(tg_audit_record(a, "[1]", &err) < 0 && strstr(err.msg, "not a JSON object"));
	json_object_set_new(o, "seq", json_integer(1));
	CHECK(audit_record_object(a, o, 1, &err) < 0 && strstr(err.msg, "\"seq\""));
	{
		/* under the ceiling as given, over it once escaped */
		size_t n = 15000, i;
		char *big = malloc(n * 3 + 32), *p = big;

		CHECK(big != NULL);
		p += sprintf(p, "{\"v\":\"");
		for (i = 0; i < n; i++, p += 3)
			memcpy(p, "\xe2\x80\x8b", 3);
		strcpy(p, "\"}");
		CHECK(tg_audit_append(a, big, &err) < 0 && strstr(err.msg, "ceiling"));
		free(big);
	}
	CHECK(tg_audit_ok(a, &err) == 0 && tg_audit_check(a, &err) == 0);
	tg_audit_get_stats(a, &st);
	CHECK(st.records == 0 && st.groups == 0);
	tg_audit_close(a);
	json_decref(o);
	return 0;
}

const struct unit_test audit_tests[] = {
	{ "audit/null_device", null_device },
	{ "audit/escaped", escaped },
	{ "audit/chain", chain },
	{ "audit/tamper", tamper },
	{ "audit/torn", torn },
	{ "audit/moved", moved },
	{ "audit/refused", refused },
	{ "audit/stop_said", stop_said },
	{ "audit/file_size_limit", file_size_limit },
	UNIT_TESTS_END,
};
