/*
 * toolgate skill trust list --trust FILE
 * toolgate skill trust add NAME KEY --trust FILE [--expires DATE]
 * toolgate skill trust revoke NAME|KEY-ID --trust FILE --reason TEXT
 *
 * The trust store's keys (docs/SKILLS.md, "Trust store"): listed, added
 * (the store made when missing) and revoked. KEY is a minisign public key
 * file, or its base64 line. A revoked key stays in the store, refused by
 * name. The file is rewritten whole, by a rename, never half-written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/skill_int.h"
#include "toolgate/skill.h"
#include "util/file.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate skill trust list --trust FILE\n"
		   "       toolgate skill trust add NAME KEY --trust FILE [--expires DATE]\n"
		   "       toolgate skill trust revoke NAME|KEY-ID --trust FILE --reason TEXT\n"
		   "\n"
		   "KEY: a minisign public key file or its base64 line. DATE: 2027-06-30 or\n"
		   "2027-06-30T12:00:00Z (UTC). Exit status: 0; 1 no such key; 2 usage; 3 the\n"
		   "store or key unreadable or malformed (docs/SKILLS.md).\n");
}

struct trust_opts {
	const char *trust, *expires, *reason;
};

static int save(const char *path, const struct tg_trust *t)
{
	char *text = tg_trust_format(t), tmp[4096];
	struct tg_trust *back = NULL;
	struct tg_error err;
	size_t len;
	int fd;

	if (!text) {
		fprintf(stderr, "toolgate skill trust: out of memory\n");
		return EXIT_DATA;
	}
	len = strlen(text);
	/* never write a store the next command refuses (a name over 128
	 * bytes, a reason over 512): every verify would fail on it */
	if (tg_trust_parse(text, len, path, &back, &err) < 0) {
		cli_say(stderr, "skill trust", err.msg);
		free(text);
		return EXIT_USAGE;
	}
	tg_trust_free(back);
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || write(fd, "\n", 1) != 1 ||
	    fsync(fd) < 0 || close(fd) < 0 || rename(tmp, path) < 0) {
		fprintf(stderr, "toolgate skill trust: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		free(text);
		return EXIT_DATA;
	}
	free(text);
	return 0;
}

/* The store at path; an empty one when missing and may_be_new. */
static int open_store(const char *path, int may_be_new, struct tg_trust **out)
{
	struct tg_error err;

	if (may_be_new && access(path, F_OK) < 0 && errno == ENOENT) {
		*out = calloc(1, sizeof(**out));
		return *out ? 0 : EXIT_DATA;
	}
	if (tg_trust_load(path, out, &err) < 0) {
		cli_say(stderr, "skill trust", err.msg);
		return EXIT_DATA;
	}
	return 0;
}

static void put_date(const char *label, time_t t)
{
	struct tm tm;
	char s[16];

	gmtime_r(&t, &tm);
	strftime(s, sizeof(s), "%Y-%m-%d", &tm);
	printf("  %s %s", label, s);
}

static int cmd_list(const struct trust_opts *o)
{
	struct tg_trust *t;
	int rc = open_store(o->trust, 0, &t);

	if (rc)
		return rc;
	for (size_t i = 0; i < t->n; i++) {
		char hex[17];

		tg_sign_keyid_hex(t->keys[i].key.id, hex);
		printf("%s  ", hex);
		cli_put_text(stdout, t->keys[i].publisher);
		if (t->keys[i].expires)
			put_date("expires", t->keys[i].expires);
		if (t->keys[i].revoked) {
			put_date("REVOKED", t->keys[i].revoked);
			if (t->keys[i].reason) {
				fputs(": ", stdout);
				cli_put_text(stdout, t->keys[i].reason);
			}
		}
		putchar('\n');
	}
	printf("%zu key%s\n", t->n, t->n == 1 ? "" : "s");
	tg_trust_free(t);
	return 0;
}

/* KEY: a file's text, or the line itself. */
static int read_key(const char *arg, struct tg_sign_pub *pub)
{
	struct tg_error err;
	size_t len;
	char *text = file_read_all(arg, TG_SIGN_FILE_MAX, 1, &len);
	int rc;

	if (!text && errno != ENOENT) {
		fprintf(stderr, "toolgate skill trust add: %s: %s\n", arg,
			errno == EFBIG ? "over 4096 bytes: not a minisign key" : strerror(errno));
		return EXIT_DATA;
	}
	rc = text ? tg_sign_pub_parse(text, len, pub, &err)
		  : tg_sign_pub_parse(arg, strlen(arg), pub, &err);
	free(text);
	if (rc < 0) {
		cli_skill_say("skill trust add", "%s: %s%s", arg, err.msg,
			      text ? "" : " (nor is it a file)");
		return EXIT_DATA;
	}
	return 0;
}

static int cmd_add(const char *name, const char *key, const struct trust_opts *o)
{
	struct tg_trust *t = NULL;
	struct tg_trust_key *k, *more;
	struct tg_sign_pub pub;
	char hex[17];
	time_t expires = 0;
	int rc;

	if (o->expires && tg_trust_date(o->expires, &expires) < 0) {
		fprintf(stderr, "toolgate skill trust add: --expires '%s': a date, 2027-06-30 or "
				"2027-06-30T12:00:00Z\n",
			o->expires);
		return EXIT_USAGE;
	}
	if ((rc = read_key(key, &pub)) != 0 || (rc = open_store(o->trust, 1, &t)) != 0)
		return rc;
	tg_sign_keyid_hex(pub.id, hex);
	rc = EXIT_DATA;
	if ((k = (struct tg_trust_key *)tg_trust_find(t, pub.id))) {
		fprintf(stderr, "toolgate skill trust add: key %s is already ", hex);
		cli_put_text(stderr, k->publisher);
		fprintf(stderr, "'s%s\n", k->revoked ? " (revoked)" : "");
		rc = EXIT_NO;
		goto out;
	}
	more = reallocarray(t->keys, t->n + 1, sizeof(*more));
	if (!more)
		goto out;
	t->keys = more;
	k = &t->keys[t->n];
	memset(k, 0, sizeof(*k));
	k->key = pub;
	k->expires = expires;
	if (!(k->publisher = strdup(name)))
		goto out;
	t->n++;
	rc = save(o->trust, t);
	if (rc == 0) {
		printf("key %s added for ", hex);
		cli_put_text(stdout, name);
		printf(" to %s\n", o->trust);
	}
out:
	tg_trust_free(t);
	return rc;
}

/* hex (16 digits) and which the same key id, leading zeros or not (minisign
 * prints an id without them). */
static int same_id(const char *hex, const char *which)
{
	size_t n = strlen(which);

	if (n == 0 || n > 16 || strspn(which, "0123456789abcdefABCDEF") != n)
		return 0;
	return strtoull(hex, NULL, 16) == strtoull(which, NULL, 16);
}

static int cmd_revoke(const char *which, const struct trust_opts *o)
{
	struct tg_trust *t = NULL;
	size_t hits = 0;
	int rc;

	if (!o->reason || !o->reason[0]) {
		fprintf(stderr, "toolgate skill trust revoke: takes --reason TEXT (why, kept in "
				"the store)\n");
		return EXIT_USAGE;
	}
	if ((rc = open_store(o->trust, 0, &t)) != 0)
		return rc;
	for (size_t i = 0; i < t->n; i++) {
		struct tg_trust_key *k = &t->keys[i];
		char hex[17];

		tg_sign_keyid_hex(k->key.id, hex);
		if (!same_id(hex, which) && strcmp(k->publisher, which) != 0)
			continue;
		hits++;
		if (k->revoked)
			continue;
		k->revoked = time(NULL);
		free(k->reason);
		k->reason = strdup(o->reason);
		printf("key %s of ", hex);
		cli_put_text(stdout, k->publisher);
		printf(" revoked\n");
	}
	rc = hits ? save(o->trust, t) : EXIT_NO;
	if (!hits)
		fprintf(stderr, "toolgate skill trust revoke: no key of %s is named or has the id "
				"'%s'\n",
			o->trust, which);
	tg_trust_free(t);
	return rc;
}

static const struct option options[] = {
	CLI_OPTION_HELP,
	{ "trust", required_argument, NULL, 't' },
	{ "expires", required_argument, NULL, 'e' },
	{ "reason", required_argument, NULL, 'r' },
	CLI_OPTION_END,
};

int cli_skill_trust(int argc, char **argv)
{
	struct trust_opts o = { 0 };
	const struct cli_bind binds[] = {
		{ 't', &o.trust }, { 'e', &o.expires }, { 'r', &o.reason }, { 0, NULL },
	};
	static const char *const verbs[] = { "list", "add", "revoke" };
	static const int operands[] = { 0, 2, 1 };
	char who[40];
	size_t v;
	int opt, n;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	for (v = 0; v < 3; v++)
		if (strcmp(argv[1], verbs[v]) == 0)
			break;
	if (v == 3) {
		fprintf(stderr, "toolgate skill trust: unknown command '%s' (list, add or revoke)\n",
			argv[1]);
		return EXIT_USAGE;
	}
	snprintf(who, sizeof(who), "skill trust %s", verbs[v]);
	opt = cli_parse(who, argc - 1, argv + 1, ":h", options, usage, binds, NULL, NULL);
	if (opt >= 0)
		return opt;
	n = argc - 1 - optind;
	if (n != operands[v] || !o.trust || (o.expires && v != 1) || (o.reason && v != 2)) {
		fprintf(stderr, "toolgate %s: takes %s\n", who,
			v == 0	 ? "--trust FILE"
			: v == 1 ? "NAME KEY --trust FILE [--expires DATE]"
				 : "NAME|KEY-ID --trust FILE --reason TEXT");
		return EXIT_USAGE;
	}
	argv += 1 + optind;
	if (v == 0)
		return cmd_list(&o);
	if (v == 1)
		return cmd_add(argv[0], argv[1], &o);
	return cmd_revoke(argv[0], &o);
}
