/*
 * The audit log: a hash chain of JSON lines, written in groups by a
 * thread of its own (include/toolgate/audit.h, docs/AUDIT.md).
 *
 * An appender queues its record (fields checked and serialized again,
 * compact, so a line is one line whatever the caller passed, and what a
 * terminal would obey or reorder written as JSON escapes, so that the
 * log is safe to read with cat or tail: util/hidden.h) with a ticket and
 * its time. A writer takes all that waits: the caller that waits for
 * its record, when no group is being written (group commit as LevelDB's
 * writers do it: a lone call writes its own record, no thread woken; the
 * records that come while a group is synced are the next group), or the
 * log's thread, for records nobody waits for. Under an exclusive flock of
 * the file, the writer: reads the tail again if the file is not
 * where it left it (another process appended), numbers the records and
 * chains them, writes the group in one write and syncs it. A failed
 * write is cut back to where the group began, so no record is ever
 * half-written, and the log stops: every later append and wait fails,
 * and a gateway refuses calls then.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "obs/audit.h"
#include "toolgate/audit.h"
#include "util/file.h"
#include "util/hidden.h"
#include "util/log.h"
#include "util/sodium.h"

#define PENDING_MAX (16u << 20) /* bytes queued before appenders wait */
#define LINE_MAX_BYTES (TG_AUDIT_RECORD_MAX + 512)
#define HASH_MARK ",\"hash\":\""
#define ZERO_HASH "0000000000000000000000000000000000000000000000000000000000000000"

struct entry {
	int64_t ticket;
	char ts[32];
	char *fields; /* the object's inside: "k":v,... (may be empty) */
	size_t len;
	struct entry *next;
};

struct tg_audit {
	int fd;
	int is_stream;
	int quiet;              /* a character device (/dev/null, a terminal): a
				 * write raises neither SIGPIPE nor SIGXFSZ */
	int discard;            /* the null device: the log is off, nothing is
				 * queued, written or waited for */
	unsigned flags;
	char *path;
	int dirfd;              /* its directory (O_PATH) and its name there: */
	char *base;             /* to see it moved or replaced, symlink or not */
	pthread_t writer;
	pthread_mutex_t lock;
	pthread_cond_t work;    /* to the writer: something to write, or stop */
	pthread_cond_t done;    /* to waiters: durable moved, or failed */
	pthread_cond_t space;   /* to appenders: pending shrank */
	struct entry *head, **tail;
	size_t pending;
	int64_t next_ticket, durable;
	int stopping;
	int users;              /* appenders and waiters inside, for close */
	int idle;               /* the writer stopped */
	int writing;            /* a group is being written (by whom: lead()) */
	int failed;             /* set under lock; tg_audit_ok reads it without */
	char failure[512];
	/* the writing group's (lead(), one at a time: writing; under lock
	 * only when copied for stats) */
	off_t end;              /* where the file ended after our last group */
	uint64_t seq;           /* the last record's, and its hash */
	char hash[65];
	uint64_t records, groups;
	uint64_t pub_seq;       /* the writer's, as of its last group, under lock */
	uint64_t pub_records, pub_groups;
	char pub_hash[65];
	char replica[64];       /* tg_audit_set_replica's name, "" for none */
	char chain[65];         /* the first record's hash once read (tg_audit_chain) */
};

/* ---- a line ------------------------------------------------------------ */

static void sha256_hex(const char *data, size_t len, char out[65])
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, (const unsigned char *)data, len);
	sodium_bin2hex(out, 65, h, sizeof(h));
}

static int is_hex64(const char *s)
{
	int i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* Whether line (len bytes, no newline) is a record whose hash holds: 0 with
 * its seq, prev and hash; -1 with why (edited: 1 in *edited when it is a
 * record whose content no longer matches its hash). */
static int line_check(const char *line, size_t len, uint64_t *seq, char prev[65], char hash[65],
		      int *edited, char *why, size_t wlen)
{
	size_t ml = strlen(HASH_MARK), at;
	const char *mark = NULL, *p;
	json_t *o, *v;
	char calc[65];

	*edited = 0;
	/* the last `,"hash":"`: inside a JSON string a quote is escaped, so
	 * the mark can only be the record's own key */
	for (p = line; (p = memmem(p, len - (size_t)(p - line), HASH_MARK, ml)); p++)
		mark = p;
	at = mark ? (size_t)(mark - line) : 0;
	if (len == 0 || line[0] != '{' || !mark || len != at + ml + 64 + 2 ||
	    memcmp(line + len - 2, "\"}", 2) != 0 || !is_hex64(line + at + ml)) {
		snprintf(why, wlen, "not a record (no hash at its end: cut, or written by "
			 "something else)");
		return -1;
	}
	o = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	v = o ? json_object_get(o, "seq") : NULL;
	if (!o || !json_is_integer(v) || json_integer_value(v) < 1 ||
	    !json_is_string(json_object_get(o, "prev")) ||
	    strlen(json_string_value(json_object_get(o, "prev"))) != 64 ||
	    !is_hex64(json_string_value(json_object_get(o, "prev"))) ||
	    !json_is_string(json_object_get(o, "ts"))) {
		json_decref(o);
		snprintf(why, wlen, "not a record (not a JSON object with seq, ts, prev and hash)");
		return -1;
	}
	*seq = (uint64_t)json_integer_value(v);
	memcpy(prev, json_string_value(json_object_get(o, "prev")), 65);
	json_decref(o);
	memcpy(hash, line + at + ml, 64);
	hash[64] = '\0';
	sha256_hex(line, at, calc);
	if (strcmp(calc, hash) != 0) {
		*edited = 1;
		snprintf(why, wlen, "edited: its content does not match its hash");
		return -1;
	}
	return 0;
}

/* ---- opening: the tail ------------------------------------------------ */

static int read_at(int fd, char *buf, size_t n, off_t off)
{
	while (n) {
		ssize_t r = pread(fd, buf, n, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		buf += r;
		n -= (size_t)r;
		off += r;
	}
	return 0;
}

#define RECORD_START "{\"seq\":"

/* Whether the n bytes at p end as a whole record does: its hash, last. */
static int ends_record(const char *p, size_t n)
{
	size_t ml = strlen(HASH_MARK);

	return n >= ml + 64 + 2 && memcmp(p + n - 2, "\"}", 2) == 0 &&
	       memcmp(p + n - 2 - 64 - ml, HASH_MARK, ml) == 0 && is_hex64(p + n - 2 - 64);
}

/* Whether the n bytes at p could be the beginning of record seq as the
 * writer writes it: what a crash mid-write leaves. */
static int starts_record(const char *p, size_t n, uint64_t seq)
{
	size_t sl = strlen(RECORD_START), i;
	char want[32];

	if (n <= sl)
		return memcmp(p, RECORD_START, n) == 0;
	if (memcmp(p, RECORD_START, sl) != 0)
		return 0;
	/* its number, as far as it was written, is the one due next */
	snprintf(want, sizeof(want), "%llu,", (unsigned long long)seq);
	for (i = 0; sl + i < n && want[i]; i++)
		if (p[sl + i] != want[i])
			return 0;
	return 1;
}

/* The last record of the log open on a->fd (whose lock we hold): a->seq,
 * a->hash and a->end. What follows the last newline was left by a crash
 * mid-write: a whole record that lost only its newline gets it back; the
 * beginning of the record due next is cut (its size in *cut), once the
 * record before it verifies. Anything else there is not ours to cut: -1
 * and err, as when the last record does not verify. */
static int read_tail(struct tg_audit *a, size_t *cut, struct tg_error *err)
{
	struct stat st;
	size_t chunk, nl, start, tlen;
	off_t base;
	char *buf, *tail, prev[65], hash[65], why[256];
	uint64_t seq;
	int edited;

	*cut = 0;
	if (fstat(a->fd, &st) < 0)
		return tg_error_sys(err, errno, "audit log %s", a->path);
	a->end = st.st_size;
	a->seq = 0;
	memcpy(a->hash, ZERO_HASH, 65);
	if (st.st_size == 0)
		return 0;
	chunk = st.st_size > 2 * LINE_MAX_BYTES ? 2 * LINE_MAX_BYTES : (size_t)st.st_size;
	base = st.st_size - (off_t)chunk;
	buf = malloc(chunk);
	if (!buf)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (read_at(a->fd, buf, chunk, base) < 0) {
		free(buf);
		return tg_error_sys(err, errno ? errno : EIO, "audit log %s: read", a->path);
	}
	for (nl = chunk; nl > 0 && buf[nl - 1] != '\n'; nl--) {
	}
	tail = buf + nl;
	tlen = chunk - nl;
	if ((nl == 0 && base > 0) || tlen > LINE_MAX_BYTES)
		goto too_long;
	if (nl > 0) {
		/* the last whole line: buf[start, nl - 1) */
		for (start = nl - 1; start > 0 && buf[start - 1] != '\n'; start--) {
		}
		if (start == 0 && base > 0)
			goto too_long;
		if (line_check(buf + start, nl - 1 - start, &a->seq, prev, a->hash, &edited, why,
			       sizeof(why)) < 0) {
			free(buf);
			return tg_error_set(err, TG_ERR_INVALID, "audit log %s: its last record "
					    "does not verify (%s); `toolgate audit verify` names the "
					    "first bad one; move the file aside to begin a new log",
					    a->path, why);
		}
	}
	if (tlen && ends_record(tail, tlen)) {
		/* whole: only its newline was lost, if it holds and follows */
		int bad = line_check(tail, tlen, &seq, prev, hash, &edited, why, sizeof(why)) < 0;

		if (bad || seq != a->seq + 1 || strcmp(prev, a->hash) != 0) {
			free(buf);
			return tg_error_set(err, TG_ERR_INVALID, "audit log %s: its last record (its "
					    "newline lost) does not verify (%s); `toolgate audit "
					    "verify` names the first bad one; move the file aside to "
					    "begin a new log", a->path,
					    bad ? why : "it does not follow the record before it");
		}
		if (write(a->fd, "\n", 1) != 1 || fdatasync(a->fd) < 0) {
			free(buf);
			return tg_error_sys(err, errno ? errno : EIO, "audit log %s: end its last "
					    "line", a->path);
		}
		a->seq = seq;
		memcpy(a->hash, hash, 65);
		a->end = st.st_size + 1;
	} else if (tlen) {
		if (!starts_record(tail, tlen, a->seq + 1)) {
			free(buf);
			return tg_error_set(err, TG_ERR_INVALID, "audit log %s: its last %zu bytes "
					    "are neither a record nor the beginning of record %llu "
					    "(written by something else?); move the file aside to "
					    "begin a new log", a->path, tlen,
					    (unsigned long long)(a->seq + 1));
		}
		if (ftruncate(a->fd, base + (off_t)nl) < 0) {
			free(buf);
			return tg_error_sys(err, errno, "audit log %s: cut its torn last line",
					    a->path);
		}
		*cut = tlen;
		a->end = base + (off_t)nl;
	}
	free(buf);
	return 0;
too_long:
	free(buf);
	return tg_error_set(err, TG_ERR_INVALID, "audit log %s: its last line is longer than a "
			    "record can be", a->path);
}

/* Before a group, under the lock: the file is still the one we opened, at
 * its path, and still holds our last record where we wrote it; then, if
 * another process appended since, its tail. A log cut, rewritten, moved
 * or removed under us stops (fail closed): a new chain begun in a file
 * that lost ours would verify clean and hide the loss. */
static int check_file(struct tg_audit *a, size_t *cut, struct tg_error *err)
{
	struct stat fst, pst;
	char mine[67];

	if (fstat(a->fd, &fst) < 0)
		return tg_error_sys(err, errno, "audit log %s", a->path);
	/* the name as given, through a symlink too (one repointed counts) */
	if (fstatat(a->dirfd, a->base, &pst, 0) < 0 || pst.st_dev != fst.st_dev ||
	    pst.st_ino != fst.st_ino)
		return tg_error_set(err, TG_ERR_INVALID, "audit log %s: the file was moved, "
				    "removed or replaced since it was opened; its records would "
				    "go where nobody looks (rotate with the gateway stopped)",
				    a->path);
	if (fst.st_size < a->end)
		return tg_error_set(err, TG_ERR_INVALID, "audit log %s: %lld bytes, fewer than "
				    "the %lld written: something cut it", a->path,
				    (long long)fst.st_size, (long long)a->end);
	if (a->end > 0 &&
	    (read_at(a->fd, mine, sizeof(mine), a->end - (off_t)sizeof(mine)) < 0 ||
	     memcmp(mine, a->hash, 64) != 0 || memcmp(mine + 64, "\"}\n", 3) != 0))
		return tg_error_set(err, TG_ERR_INVALID, "audit log %s: record %llu is no longer "
				    "where it was written: something rewrote the file", a->path,
				    (unsigned long long)a->seq);
	if (fst.st_size == a->end)
		return 0;
	{
		/* another writer's records follow ours: the first chains on */
		char next[256], want[80];
		size_t n = fst.st_size - a->end < (off_t)sizeof(next) - 1
				   ? (size_t)(fst.st_size - a->end) : sizeof(next) - 1;

		snprintf(want, sizeof(want), "\"prev\":\"%s\"", a->hash);
		if (read_at(a->fd, next, n, a->end) < 0)
			return tg_error_sys(err, errno ? errno : EIO, "audit log %s: read", a->path);
		next[n] = '\0';
		if (!starts_record(next, n, a->seq + 1) ||
		    (n >= 200 && !memmem(next, n, want, strlen(want))))
			return tg_error_set(err, TG_ERR_INVALID, "audit log %s: what follows record "
					    "%llu is not its successor: something else wrote the "
					    "file", a->path, (unsigned long long)a->seq);
	}
	return read_tail(a, cut, err);
}

/* ---- the writer -------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Append one chained line for e to buf (at *len of cap bytes). */
static int chain_line(struct tg_audit *a, const char *ts, const char *fields, size_t flen,
		      char **buf, size_t *len, size_t *cap)
{
	char head[160];
	size_t hl, need, at;

	hl = (size_t)snprintf(head, sizeof(head), "{\"seq\":%llu,\"ts\":\"%s\",\"prev\":\"%s\"",
			      (unsigned long long)(a->seq + 1), ts, a->hash);
	/* head, comma, fields, the hash's key, its 64 digits, "}\n */
	need = *len + hl + 1 + flen + strlen(HASH_MARK) + 64 + 3;
	if (need > *cap) {
		size_t ncap = *cap ? *cap : 4096;
		char *nb;

		while (ncap < need)
			ncap *= 2;
		nb = realloc(*buf, ncap);
		if (!nb)
			return -1;
		*buf = nb;
		*cap = ncap;
	}
	at = *len;
	memcpy(*buf + *len, head, hl);
	*len += hl;
	if (flen) {
		(*buf)[(*len)++] = ',';
		memcpy(*buf + *len, fields, flen);
		*len += flen;
	}
	sha256_hex(*buf + at, *len - at, a->hash);
	a->seq++;
	memcpy(*buf + *len, HASH_MARK, strlen(HASH_MARK));
	*len += strlen(HASH_MARK);
	memcpy(*buf + *len, a->hash, 64);
	*len += 64;
	memcpy(*buf + *len, "\"}\n", 3); /* no NUL: the group is written by length */
	*len += 3;
	return 0;
}

static void now_ts(char out[32])
{
	struct timespec ts;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%06ldZ", ts.tv_nsec / 1000);
}

#define RECOVERED_FMT "\"kind\":\"audit_recovered\",\"cut_bytes\":%zu"

/* Write one group; 0, or -1 with a->failure set. */
static int write_group(struct tg_audit *a, struct entry *list)
{
	char *buf = NULL, note[96], ts[32];
	size_t len = 0, cap = 0, cut = 0;
	struct tg_error err;
	struct entry *e;
	int rc = -1, locked = 0;
	uint64_t seq0;
	char hash0[65];

	if (!a->is_stream) {
		while (flock(a->fd, LOCK_EX) < 0 && errno == EINTR) {
		}
		locked = 1;
		if (check_file(a, &cut, &err) < 0) {
			snprintf(a->failure, sizeof(a->failure), "%s", err.msg);
			goto out;
		}
	}
	seq0 = a->seq;
	memcpy(hash0, a->hash, 65);
	if (cut) {
		now_ts(ts);
		snprintf(note, sizeof(note), RECOVERED_FMT, cut);
		if (chain_line(a, ts, note, strlen(note), &buf, &len, &cap) < 0)
			goto nomem;
	}
	for (e = list; e; e = e->next)
		if (chain_line(a, e->ts, e->fields, e->len, &buf, &len, &cap) < 0)
			goto nomem;
	if (write_all(a->fd, buf, len) < 0 ||
	    (!(a->flags & TG_AUDIT_NOSYNC) && !a->is_stream && fdatasync(a->fd) < 0)) {
		int e2 = errno;

		/* never a half-written record: back to where the group began
		 * (if even that fails, the next opener cuts the torn line) */
		int cutback = a->is_stream || ftruncate(a->fd, a->end) == 0;

		a->seq = seq0;
		memcpy(a->hash, hash0, 65);
		snprintf(a->failure, sizeof(a->failure), "audit log %s: write: %s%s", a->path,
			 strerror(e2), cutback ? "" : " (and the group could not be cut back: "
			 "the next opener cuts it)");
		goto out;
	}
	a->end += (off_t)len;
	a->records += a->seq - seq0;
	a->groups++;
	rc = 0;
	goto out;
nomem:
	a->seq = seq0;
	memcpy(a->hash, hash0, 65);
	snprintf(a->failure, sizeof(a->failure), "audit log %s: out of memory", a->path);
out:
	if (locked)
		flock(a->fd, LOCK_UN);
	free(buf);
	return rc;
}

/* Write what is queued as one group: the caller holds a->lock, no group
 * is being written, and a->head is not empty. The lock is let go while
 * the group is written, and held again on return. */
static void lead(struct tg_audit *a)
{
	struct entry *list = a->head, *e;
	int64_t last = 0;
	int rc, failed = a->failed;

	a->writing = 1;
	a->head = NULL;
	a->tail = &a->head;
	a->pending = 0;
	pthread_cond_broadcast(&a->space);
	pthread_mutex_unlock(&a->lock);
	if (failed) {
		rc = -1;
	} else if (a->quiet) {
		rc = write_group(a, list);
	} else {
		/* on a caller's thread too: a log on a pipe whose reader left
		 * (SIGPIPE) or past RLIMIT_FSIZE (SIGXFSZ) stops the log, as on
		 * the log's own thread (all blocked there), never the process */
		sigset_t set, old;

		sigemptyset(&set);
		sigaddset(&set, SIGPIPE);
		sigaddset(&set, SIGXFSZ);
		pthread_sigmask(SIG_BLOCK, &set, &old);
		rc = write_group(a, list);
		if (rc < 0) {
			struct timespec zero = { 0, 0 };

			if (sigismember(&old, SIGPIPE))
				sigdelset(&set, SIGPIPE);
			if (sigismember(&old, SIGXFSZ))
				sigdelset(&set, SIGXFSZ);
			while (!sigisemptyset(&set) && sigtimedwait(&set, NULL, &zero) > 0) {
			}
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	for (e = list; e;) {
		struct entry *next = e->next;

		last = e->ticket;
		free(e->fields);
		free(e);
		e = next;
	}
	pthread_mutex_lock(&a->lock);
	if (rc < 0 && !a->failed) {
		/* read without the lock by tg_audit_ok */
		__atomic_store_n(&a->failed, 1, __ATOMIC_RELEASE);
		tg_log(TG_LOG_ERROR, "%s: the audit log stopped; calls are refused", a->failure);
	}
	if (rc == 0)
		a->durable = last;
	a->pub_seq = a->seq;
	a->pub_records = a->records;
	a->pub_groups = a->groups;
	memcpy(a->pub_hash, a->hash, 65);
	a->writing = 0;
	pthread_cond_broadcast(&a->done);
}

/* The log's thread: what nobody waits for (tg_audit_append's records),
 * and what is left at close. */
static void *writer_main(void *arg)
{
	struct tg_audit *a = arg;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while ((!a->head || a->writing) && !a->stopping)
			pthread_cond_wait(a->writing ? &a->done : &a->work, &a->lock);
		while (a->writing) /* stopping: a caller's group first */
			pthread_cond_wait(&a->done, &a->lock);
		if (!a->head)
			break;
		lead(a);
	}
	a->idle = 1;
	pthread_cond_broadcast(&a->done);
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* ---- the API ------------------------------------------------------------ */

static void audit_free(struct tg_audit *a)
{
	if (a->fd > 2)
		close(a->fd);
	pthread_mutex_destroy(&a->lock);
	pthread_cond_destroy(&a->work);
	pthread_cond_destroy(&a->done);
	pthread_cond_destroy(&a->space);
	if (a->dirfd >= 0)
		close(a->dirfd);
	free(a->path);
	free(a->base);
	free(a);
}

/* Sync the directory holding path: a log just created stays in it after a
 * power cut. */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
			  : strdup(".");
	int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1, rc;

	free(dir);
	if (fd < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int tg_audit_open(const char *path, unsigned flags, struct tg_audit **out, struct tg_error *err)
{
	struct stat st;
	struct tg_audit *a;
	size_t cut = 0;
	int created = 0;

	*out = NULL;
	if (!path || !*path)
		return tg_error_set(err, TG_ERR_INVALID, "audit log: no path");
	if (tg_sodium_load("audit log", err) < 0)
		return -1;
	a = calloc(1, sizeof(*a));
	if (!a)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	a->path = strdup(path);
	a->flags = flags;
	a->dirfd = -1;
	a->tail = &a->head;
	a->next_ticket = 1;
	memcpy(a->hash, ZERO_HASH, 65);
	memcpy(a->pub_hash, ZERO_HASH, 65);
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->work, NULL);
	pthread_cond_init(&a->done, NULL);
	pthread_cond_init(&a->space, NULL);
	if (strcmp(path, "-") == 0) {
		a->fd = 2;
		a->is_stream = 1;
		if (fstat(a->fd, &st) < 0)
			memset(&st, 0, sizeof(st)); /* not told a character device */
	} else {
		a->fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
		if (a->fd < 0 && errno == ENOENT) {
			created = 1;
			a->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
			if (a->fd >= 0 && !(flags & TG_AUDIT_NOSYNC) && sync_dir(path) < 0) {
				tg_error_sys(err, errno, "audit log %s: sync its directory", path);
				audit_free(a);
				return -1;
			}
		}
		if (a->fd < 0 && errno == EACCES)
			a->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC); /* a pipe, a tty */
		if (a->fd < 0 || fstat(a->fd, &st) < 0) {
			tg_error_sys(err, errno, "audit log %s", path);
			audit_free(a);
			return -1;
		}
		/* not a file (/dev/null, a pipe): a stream, as stderr is */
		a->is_stream = !S_ISREG(st.st_mode);
		if (!a->is_stream && (fcntl(a->fd, F_GETFL) & O_ACCMODE) != O_RDWR) {
			/* its chain must be read to go on with it */
			tg_error_set(err, TG_ERR_INVALID, "audit log %s: a file this process may "
				     "write but not read", path);
			audit_free(a);
			return -1;
		}
	}
	a->quiet = S_ISCHR(st.st_mode);
	a->discard = a->quiet && st.st_rdev == makedev(1, 3);
	if (!a->is_stream && (flags & TG_AUDIT_NOT_EMPTY) && !created &&
	    lseek(a->fd, 0, SEEK_END) == 0) {
		tg_error_set(err, TG_ERR_INVALID, "audit log %s: empty (cut?): a new one is begun by "
			     "the gateway, not here", path);
		audit_free(a);
		return -1;
	}
	if (!a->is_stream) {
		const char *slash = strrchr(path, '/');
		char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
				  : strdup(".");

		a->base = strdup(slash ? slash + 1 : path);
		a->dirfd = dir ? open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		free(dir);
		while (flock(a->fd, LOCK_EX) < 0 && errno == EINTR) {
		}
		if (!a->path || !a->base || a->dirfd < 0 || read_tail(a, &cut, err) < 0) {
			if (!a->path || !a->base || a->dirfd < 0)
				tg_error_sys(err, a->dirfd < 0 ? errno : ENOMEM, "audit log %s", path);
			audit_free(a);
			return -1;
		}
		flock(a->fd, LOCK_UN);
		a->pub_seq = a->seq;
		memcpy(a->pub_hash, a->hash, 65);
	}
	{
		/* the writer takes no signal meant for the process (a SIGHUP
		 * the embedder waits for would kill it there) */
		sigset_t all, old;
		int rc;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&a->writer, NULL, writer_main, a);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (rc != 0) {
			audit_free(a);
			return tg_error_sys(err, rc, "audit log: its writer thread");
		}
	}
	if (cut) {
		char note[96];
		int64_t t;

		snprintf(note, sizeof(note), "{" RECOVERED_FMT "}", cut);
		t = tg_audit_append(a, note, err);
		if (t < 0 || tg_audit_wait(a, t, err) < 0) {
			tg_audit_close(a);
			return -1;
		}
	}
	*out = a;
	return 0;
}

void tg_audit_close(struct tg_audit *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stopping = 1;
	pthread_cond_broadcast(&a->work);
	pthread_cond_broadcast(&a->space);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->writer, NULL);
	/* an appender that was waiting for space, or a waiter, leaves first */
	pthread_mutex_lock(&a->lock);
	while (a->users)
		pthread_cond_wait(&a->done, &a->lock);
	pthread_mutex_unlock(&a->lock);
	audit_free(a);
}

static const char *const reserved[] = { "seq", "ts", "prev", "hash", "replica" };

/* The fields of a record, an object, checked: 0, or -1 and err. */
static int fields_check(json_t *o, struct tg_error *err)
{
	size_t i;

	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (json_object_get(o, reserved[i]))
			return tg_error_set(err, TG_ERR_INVALID, "audit record: \"%s\" is the "
					    "log's own key", reserved[i]);
	return 0;
}

int tg_audit_set_replica(struct tg_audit *a, const char *name, struct tg_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 1 || n > 63 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789._-") != n)
		return tg_error_set(err, TG_ERR_INVALID, "audit log: replica name \"%.80s\": 1 to 63 "
				    "letters, digits, '.', '_' or '-'", name ? name : "");
	pthread_mutex_lock(&a->lock);
	snprintf(a->replica, sizeof(a->replica), "%s", name);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

/* fields (JSON text of an object) with "replica" first when the log has
 * one: a new string, or NULL out of memory. */
static char *with_replica(struct tg_audit *a, char *fields)
{
	char *out;

	if (!a->replica[0] || !fields)
		return fields;
	if (asprintf(&out, "{\"replica\":\"%s\"%s%s", a->replica, fields[1] == '}' ? "" : ",",
		     fields + 1) < 0)
		out = NULL;
	free(fields);
	return out;
}

/* tg_audit_append of fields o (a checked object, not released); wake: the
 * log's thread is told (nobody may wait); else the caller waits next and
 * stays counted in users (for close) from here on: wait_for lets go. */
static int64_t queue(struct tg_audit *a, json_t *o, int wake, struct tg_error *err)
{
	struct entry *e;
	char *text, *safe;
	size_t n;
	int64_t t;

	text = with_replica(a, json_dumps(o, JSON_COMPACT));
	n = text ? strlen(text) : 0;
	if (n > TG_AUDIT_RECORD_MAX) {
		free(text);
		return tg_error_set(err, TG_ERR_LIMIT, "audit record: %zu bytes, over the ceiling "
				    "of %d", n, TG_AUDIT_RECORD_MAX);
	}
	/* the same values, nothing a terminal acts on (a bidi control, an
	 * escape sequence in a tool's name or an error quoting arguments) */
	safe = text ? hidden_json(text, strlen(text)) : NULL;
	free(text);
	text = safe;
	if (text && strlen(text) > TG_AUDIT_RECORD_MAX) {
		n = strlen(text);
		free(text);
		return tg_error_set(err, TG_ERR_LIMIT, "audit record: %zu bytes once its hidden "
				    "characters are escaped, over the ceiling of %d", n,
				    TG_AUDIT_RECORD_MAX);
	}
	if (a->discard && text) {
		/* checked as a file's would be, then dropped: a ticket always
		 * durable (the gate's call records skip this, audit_discards) */
		free(text);
		return 0;
	}
	e = text ? calloc(1, sizeof(*e)) : NULL;
	if (!e) {
		free(text);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* the object's inside: without its braces */
	e->len = strlen(text) - 2;
	memmove(text, text + 1, e->len);
	text[e->len] = '\0';
	e->fields = text;
	now_ts(e->ts);
	pthread_mutex_lock(&a->lock);
	a->users++;
	while (a->pending > PENDING_MAX && !a->failed && !a->stopping)
		pthread_cond_wait(&a->space, &a->lock);
	if (a->failed || a->stopping) {
		if (--a->users == 0 && a->stopping)
			pthread_cond_broadcast(&a->done);
		pthread_mutex_unlock(&a->lock);
		free(e->fields);
		free(e);
		return tg_error_set(err, TG_ERR_SYSTEM, "%s", a->failed ? a->failure
							: "audit log: closed");
	}
	t = e->ticket = a->next_ticket++;
	*a->tail = e;
	a->tail = &e->next;
	a->pending += e->len + 200;
	if (wake) {
		pthread_cond_signal(&a->work);
		a->users--; /* not stopping: nobody to tell */
	}
	pthread_mutex_unlock(&a->lock);
	return t;
}

/* queue of fields given as text: parsed and checked first (an embedder's
 * text is serialized again, compact, so a line is one line whatever it
 * passed). */
static int64_t queue_text(struct tg_audit *a, const char *fields_json, int wake,
			  struct tg_error *err)
{
	json_error_t jerr;
	json_t *o;
	size_t n;
	int64_t t;

	if (!fields_json)
		return tg_error_set(err, TG_ERR_INVALID, "audit record: no fields");
	n = strlen(fields_json);
	if (n > TG_AUDIT_RECORD_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "audit record: %zu bytes, over the ceiling "
				    "of %d", n, TG_AUDIT_RECORD_MAX);
	o = json_loadb(fields_json, n, JSON_REJECT_DUPLICATES, &jerr);
	if (!json_is_object(o)) {
		json_decref(o);
		return tg_error_set(err, TG_ERR_INVALID, "audit record: not a JSON object%s%s",
				    o ? "" : ": ", o ? "" : jerr.text);
	}
	t = fields_check(o, err) < 0 ? -1 : queue(a, o, wake, err);
	json_decref(o);
	return t;
}

/* tg_audit_wait's, for a caller counted in users already. */
static int wait_for(struct tg_audit *a, int64_t ticket, struct tg_error *err);

int64_t tg_audit_append(struct tg_audit *a, const char *fields_json, struct tg_error *err)
{
	return queue_text(a, fields_json, 1, err);
}

int tg_audit_record(struct tg_audit *a, const char *fields_json, struct tg_error *err)
{
	int64_t t = queue_text(a, fields_json, 0, err);

	if (t < 0 || a->discard)
		return t < 0 ? -1 : 0;
	/* counted in users since queue: close cannot free a in between */
	return wait_for(a, t, err);
}

int audit_record_object(struct tg_audit *a, json_t *fields, int wait, struct tg_error *err)
{
	int64_t t;

	if (!json_is_object(fields))
		return tg_error_set(err, TG_ERR_INVALID, "audit record: not a JSON object");
	if (fields_check(fields, err) < 0)
		return -1;
	t = queue(a, fields, !wait, err);
	if (t < 0 || !wait || a->discard)
		return t < 0 ? -1 : 0;
	return wait_for(a, t, err);
}

int audit_discards(const struct tg_audit *a)
{
	return a->discard;
}

const char *audit_replica(const struct tg_audit *a)
{
	return a->replica; /* set once, before the gate reads it */
}

int audit_holds(struct tg_audit *a, uint64_t seq, const char *hash, struct tg_error *err)
{
	struct tg_audit_head head = { .seq = seq };
	struct tg_audit_report rep;

	if (a->is_stream)
		return 0;
	snprintf(head.hash, sizeof(head.hash), "%s", hash);
	if (tg_audit_verify(a->path, &head, &rep, err) < 0)
		return -1;
	return rep.head == 1;
}

int tg_audit_wait(struct tg_audit *a, int64_t ticket, struct tg_error *err)
{
	pthread_mutex_lock(&a->lock);
	a->users++;
	pthread_mutex_unlock(&a->lock);
	return wait_for(a, ticket, err);
}

static int wait_for(struct tg_audit *a, int64_t ticket, struct tg_error *err)
{
	int rc = 0;

	pthread_mutex_lock(&a->lock);
	/* a ticket given before close is written before the writer stops;
	 * with no group being written, this caller writes the next one */
	while (a->durable < ticket && !a->failed && !(a->stopping && !a->head && a->idle)) {
		if (!a->writing && a->head && !a->stopping)
			lead(a);
		else
			pthread_cond_wait(&a->done, &a->lock);
	}
	if (a->durable < ticket) {
		tg_error_set(err, TG_ERR_SYSTEM, "%s", a->failed ? a->failure : "audit log: closed");
		rc = -1;
	}
	if (--a->users == 0 && a->stopping)
		pthread_cond_broadcast(&a->done);
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int tg_audit_ok(struct tg_audit *a, struct tg_error *err)
{
	int rc = 0;

	/* asked before every call: a log that works is told without its
	 * lock, which the calls' records contend for */
	if (!__atomic_load_n(&a->failed, __ATOMIC_ACQUIRE))
		return 0;
	pthread_mutex_lock(&a->lock);
	tg_error_set(err, TG_ERR_SYSTEM, "%s", a->failure);
	rc = -1;
	pthread_mutex_unlock(&a->lock);
	return rc;
}

int tg_audit_check(struct tg_audit *a, struct tg_error *err)
{
	struct stat fst, pst;
	struct statvfs vfs;
	char why[128];

	if (tg_audit_ok(a, err) < 0 || a->is_stream)
		return tg_audit_ok(a, err);
	/* fd, dirfd and base are set at open and never change: no lock */
	if (fstat(a->fd, &fst) < 0 || fstatat(a->dirfd, a->base, &pst, 0) < 0 ||
	    pst.st_dev != fst.st_dev || pst.st_ino != fst.st_ino)
		return tg_error_set(err, TG_ERR_SYSTEM, "audit log %s: the file was moved, removed "
				    "or replaced since it was opened", a->path);
	if (fstatvfs(a->fd, &vfs) < 0)
		return tg_error_sys(err, errno, "audit log %s", a->path);
	if (file_room(&vfs, why, sizeof(why)) < 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "audit log %s: its file system is %s",
				    a->path, why);
	return 0;
}

int tg_audit_chain(struct tg_audit *a, char out[65])
{
	char *line, prev[65], why[128];
	uint64_t seq;
	ssize_t n;
	int edited, rc = 1;

	out[0] = '\0';
	if (a->is_stream)
		return 1;
	pthread_mutex_lock(&a->lock);
	if (a->chain[0]) {
		memcpy(out, a->chain, 65);
		rc = 0;
	}
	pthread_mutex_unlock(&a->lock);
	if (rc == 0)
		return 0;
	/* the first line: written once, never changed after (no lock) */
	line = malloc(LINE_MAX_BYTES + 1);
	n = line ? pread(a->fd, line, LINE_MAX_BYTES + 1, 0) : -1;
	if (n > 0) {
		char *nl = memchr(line, '\n', (size_t)n);

		if (nl && line_check(line, (size_t)(nl - line), &seq, prev, out, &edited, why,
				     sizeof(why)) == 0 && seq == 1)
			rc = 0;
	}
	free(line);
	if (rc != 0) {
		out[0] = '\0';
		return 1;
	}
	pthread_mutex_lock(&a->lock);
	memcpy(a->chain, out, 65);
	pthread_mutex_unlock(&a->lock);
	return 0;
}

void tg_audit_get_stats(struct tg_audit *a, struct tg_audit_stats *st)
{
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&a->lock);
	st->records = a->pub_records;
	st->groups = a->pub_groups;
	st->last_seq = a->pub_seq;
	memcpy(st->last_hash, a->pub_hash, 65);
	pthread_mutex_unlock(&a->lock);
}

/* ---- verify ------------------------------------------------------------ */

/* The size of the log at path as its writers left it: taken under a
 * shared lock, so no group is half-written below it; read past it later
 * without the lock (a long verify does not hold calls up). */
static int settled_size(FILE *f, off_t *size)
{
	struct stat st;
	int rc;

	while ((rc = flock(fileno(f), LOCK_SH)) < 0 && errno == EINTR) {
	}
	if (rc < 0 && errno != ENOLCK && errno != EOPNOTSUPP)
		return -1;
	rc = fstat(fileno(f), &st);
	flock(fileno(f), LOCK_UN);
	*size = S_ISREG(st.st_mode) ? st.st_size : -1; /* a pipe: all of it */
	return rc;
}

int tg_audit_verify(const char *path, const struct tg_audit_head *expect,
		    struct tg_audit_report *rep, struct tg_error *err)
{
	char *line, prev[65], hash[65], why[256];
	uint64_t lineno = 0, seq;
	off_t size, at = 0;
	FILE *f;
	int edited;

	memset(rep, 0, sizeof(*rep));
	memcpy(rep->last_hash, ZERO_HASH, 65);
	f = fopen(path, "re");
	if (!f)
		return tg_error_sys(err, errno, "audit log %s", path);
	if (settled_size(f, &size) < 0) {
		fclose(f);
		return tg_error_sys(err, errno, "audit log %s", path);
	}
	line = malloc(LINE_MAX_BYTES + 2);
	if (!line) {
		fclose(f);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	while ((size < 0 || at < size) && fgets(line, LINE_MAX_BYTES + 2, f)) {
		size_t n = strlen(line);
		int torn;

		lineno++;
		at += (off_t)n;
		if (size >= 0 && at > size) {
			/* written after we looked: as far as the settled end */
			n -= (size_t)(at - size);
			line[n] = '\0';
		}
		torn = n == 0 || line[n - 1] != '\n';
		if (torn) {
			snprintf(rep->problem, sizeof(rep->problem), feof(f) || (size >= 0 && at >= size)
				 ? "a torn last line (cut mid-write; the gateway cuts it when it "
				   "opens the log)"
				 : "a line longer than a record can be, or with a NUL byte");
			rep->bad_line = lineno;
			break;
		}
		line[--n] = '\0';
		if (strlen(line) != n || line_check(line, n, &seq, prev, hash, &edited, why,
						    sizeof(why)) < 0) {
			if (strlen(line) != n)
				snprintf(why, sizeof(why), "not a record (a NUL byte in it)");
			snprintf(rep->problem, sizeof(rep->problem), "%s", why);
			rep->bad_line = lineno;
			break;
		}
		if (seq != rep->last_seq + 1 || strcmp(prev, rep->last_hash) != 0) {
			if (seq > rep->last_seq + 1)
				snprintf(rep->problem, sizeof(rep->problem),
					 "record %llu where %llu was due: %llu record(s) removed "
					 "before it", (unsigned long long)seq,
					 (unsigned long long)(rep->last_seq + 1),
					 (unsigned long long)(seq - rep->last_seq - 1));
			else if (seq <= rep->last_seq)
				snprintf(rep->problem, sizeof(rep->problem),
					 "record %llu after record %llu: inserted, repeated or "
					 "reordered", (unsigned long long)seq,
					 (unsigned long long)rep->last_seq);
			else
				snprintf(rep->problem, sizeof(rep->problem),
					 "record %llu does not follow the record before it (its prev "
					 "is not that record's hash): replaced or inserted",
					 (unsigned long long)seq);
			rep->bad_line = lineno;
			break;
		}
		rep->records++;
		rep->last_seq = seq;
		memcpy(rep->last_hash, hash, 65);
		if (seq == 1)
			memcpy(rep->first_hash, hash, 65);
		if (expect && seq == expect->seq)
			rep->head = strcmp(hash, expect->hash) == 0 ? 1 : -1;
	}
	if (!rep->bad_line && ferror(f)) {
		free(line);
		fclose(f);
		return tg_error_sys(err, EIO, "audit log %s: read", path);
	}
	free(line);
	fclose(f);
	if (!rep->bad_line && expect && rep->head != 1) {
		/* the head noted then must still be there, as it was */
		rep->bad_line = lineno + 1;
		snprintf(rep->problem, sizeof(rep->problem), "record %llu %s: the log was cut back "
			 "or rewritten since that head was noted", (unsigned long long)expect->seq,
			 rep->head ? "has another hash" : "is not there");
	}
	return 0;
}
