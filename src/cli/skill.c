/*
 * toolgate skill check DIR...
 * toolgate skill manifest DIR
 * toolgate skill keygen --secret-key FILE --public-key FILE
 *                       (--password-file FILE | --no-password)
 * toolgate skill sign DIR --secret-key FILE [--password-file FILE]
 * toolgate skill verify DIR... (--trust FILE | --public-key FILE)
 * toolgate skill trust list|add|revoke ... (src/cli/skill_trust.c)
 *
 * Agent Skills read, signed and verified (docs/SKILLS.md). check reads a
 * skill as the gateway would, without running anything; manifest prints
 * what sign signs; keygen, sign and verify write and read minisign's
 * formats, so a publisher may sign with `minisign -S` instead and an
 * operator verify with `minisign -V` and `sha256sum -c`.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/skill_int.h"
#include "toolgate/contract.h"
#include "toolgate/egress.h"
#include "toolgate/skill.h"
#include "util/file.h"
#include "util/hidden.h"
#include "util/sodium.h"
#include "util/utf8.h"

#define PASSWORD_MAX 1024

static void usage(FILE *f)
{
	fprintf(f,
		"usage: toolgate skill check DIR...\n"
		"       toolgate skill manifest DIR\n"
		"       toolgate skill keygen --secret-key FILE --public-key FILE\n"
		"                             (--password-file FILE | --no-password)\n"
		"       toolgate skill sign DIR --secret-key FILE [--password-file FILE]\n"
		"       toolgate skill verify DIR... (--trust FILE | --public-key FILE)\n"
		"       toolgate skill scan DIR... [--sarif] [--threshold SEVERITY] [--rules FILE]\n"
		"       toolgate skill rules [--rules FILE] [--json]\n"
		"       toolgate skill install DIR --skills SKILLS --trust FILE [--rules FILE]\n"
		"       toolgate skill remove NAME --skills SKILLS\n"
		"       toolgate skill list --skills SKILLS [--trust FILE] [--rules FILE]\n"
		"       toolgate skill show DIR [--trust FILE] [--rules FILE]\n"
		"       toolgate skill trust list|add|revoke --trust FILE ...\n"
		"\n"
		"Keys and signatures are minisign's (docs/SKILLS.md). Exit status: 0; 1 a\n"
		"skill malformed, unsigned, untrusted or tampered, or a finding at or above\n"
		"the threshold (scan); 2 usage; 3 a folder, key, rules file\n"
		"or store missing, unreadable or malformed, or a key's wrong password\n"
		"(docs/CLI.md).\n");
}

void cli_skill_say(const char *who, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	cli_say(stderr, who, line);
}

/* The exit status for a failure err describes. */
int cli_skill_status(const struct tg_error *err)
{
	return err->code == TG_ERR_SYSTEM || err->code == TG_ERR_NOMEM ? EXIT_DATA : EXIT_NO;
}

/* The first line of path (a password), at most PASSWORD_MAX bytes, into a
 * buffer the caller wipes (cli_secret_free). */
static char *read_password(const char *who, const char *path)
{
	size_t len, k;
	char *text = file_read_all(path, PASSWORD_MAX, 1, &len);

	if (!text) {
		fprintf(stderr, "toolgate %s: --password-file %s: %s\n", who, path,
			errno == EFBIG ? "over 1024 bytes" : strerror(errno));
		return NULL;
	}
	/* only the first line is the password: the rest of the file (pass(1)
	 * keeps other secrets there) is wiped now, as secret_free wipes only
	 * up to the first NUL */
	k = strcspn(text, "\r\n");
	sodium_memzero(text + k, len - k);
	if (!text[0]) {
		fprintf(stderr, "toolgate %s: --password-file %s: empty\n", who, path);
		free(text);
		return NULL;
	}
	return text;
}

static void secret_free(char *s)
{
	if (s) {
		sodium_memzero(s, strlen(s));
		free(s);
	}
}

/* text written to path, created with mode (never over a file there): 0,
 * or -1 having said why. */
static int write_new(const char *who, const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	size_t len = strlen(text);

	if (fd < 0) {
		fprintf(stderr, "toolgate %s: %s: %s%s\n", who, path, strerror(errno),
			errno == EEXIST ? " (not overwritten: remove it first)" : "");
		return -1;
	}
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0) {
		fprintf(stderr, "toolgate %s: %s: %s\n", who, path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	close(fd);
	return 0;
}

/* text written to name in the folder open at dfd (dir in messages) in
 * place of what is there: a new file renamed over it, so a reader sees the
 * old or the new, never half. Both names are resolved beneath dfd, the
 * folder that was read: dir's path is not looked up again, so a folder
 * swapped for a link meanwhile cannot send the files elsewhere. */
static int write_over(const char *who, int dfd, const char *dir, const char *name,
		      const char *text)
{
	char tmp[64];
	size_t len = strlen(text);
	int fd;

	snprintf(tmp, sizeof(tmp), ".%s.%ld", name, (long)getpid());
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "toolgate %s: %s/%s: %s\n", who, dir, tmp, strerror(errno));
		return -1;
	}
	if (write(fd, text, len) != (ssize_t)len || fsync(fd) < 0) {
		fprintf(stderr, "toolgate %s: %s/%s: %s\n", who, dir, tmp, strerror(errno));
		close(fd);
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	close(fd);
	if (renameat(dfd, tmp, dfd, name) < 0) {
		fprintf(stderr, "toolgate %s: %s/%s: %s\n", who, dir, name, strerror(errno));
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	return 0;
}

/* A skill (a folder, folder 1) read, or NULL having said why (the exit
 * status in *status). */
static struct tg_skill *load(const char *who, const char *dir, int folder, int *status)
{
	struct tg_skill *s;
	struct tg_error err;

	if ((folder ? tg_folder_load(dir, &s, &err) : tg_skill_load(dir, &s, &err)) < 0) {
		cli_say(stderr, who, err.msg);
		*status = cli_skill_status(&err);
		return NULL;
	}
	return s;
}

/* What a person reads of a skill: its version (text from outside) in its
 * display form, at most 64 bytes of it. */
static void describe(const struct tg_skill *s, char *out, size_t len)
{
	char hex[65], version[300];

	sodium_bin2hex(hex, sizeof(hex), s->digest, sizeof(s->digest));
	if (!s->meta.name[0]) { /* a folder, not a skill */
		snprintf(out, len, "%zu file%s, %llu bytes, manifest sha256:%s", s->n_files,
			 s->n_files == 1 ? "" : "s", (unsigned long long)s->bytes, hex);
		return;
	}
	if (s->meta.version) {
		size_t n = strlen(s->meta.version);

		hidden_display(s->meta.version, utf8_cut(s->meta.version, n, 64), version,
			       sizeof(version), NULL);
	}
	snprintf(out, len, "%s %s, %zu file%s, %llu bytes, manifest sha256:%s", s->meta.name,
		 s->meta.version ? version : "(no version)", s->n_files,
		 s->n_files == 1 ? "" : "s", (unsigned long long)s->bytes, hex);
}

int cli_skill_tools_check(const struct tg_skill *s, size_t *n, struct tg_error *err)
{
	struct tg_skill_tool *t;
	int rc = 0;

	if (tg_skill_tools(s, s->dir, &t, n, err) < 0)
		return -1;
	for (size_t i = 0; rc == 0 && i < *n; i++) {
		struct tg_contract *c;

		/* no schema options: a skill's schemas are its own */
		rc = tg_contract_parse(t[i].contract, strlen(t[i].contract), t[i].origin, NULL, &c,
				       err);
		for (size_t e = 0; rc == 0 && c->egress && c->egress[e]; e++)
			if (tg_egress_rule_is_address(c->egress[e]))
				rc = tg_error_set(err, TG_ERR_INVALID, "%s: executor.egress[%zu]: %.200s: "
						  TG_SKILL_EGRESS_ADDRESS, c->file, e, c->egress[e]);
		tg_contract_free(c);
	}
	tg_skill_tools_free(t, *n);
	return rc;
}

/* The tools s declares checked, and counted after what (len): 0, or -1
 * and said why. */
static int check_tools(const struct tg_skill *s, char *what, size_t len)
{
	struct tg_error err;
	size_t n, at = strlen(what);

	if (cli_skill_tools_check(s, &n, &err) < 0) {
		cli_skill_say("skill check", "%s", err.msg);
		return -1;
	}
	if (n)
		snprintf(what + at, len - at, ", %zu tool%s", n, n == 1 ? "" : "s");
	return 0;
}

static int cmd_check(char **dirs, int n)
{
	int status = 0;

	for (int i = 0; i < n; i++) {
		struct tg_skill *s;
		int st = 0;
		char what[512];

		s = load("skill check", dirs[i], 0, &st);
		if (!s) {
			status = status ? status : st;
			continue;
		}
		describe(s, what, sizeof(what));
		if (check_tools(s, what, sizeof(what)) < 0) {
			status = status ? status : EXIT_NO;
			tg_skill_free(s);
			continue;
		}
		printf("%s: %s\n", dirs[i], what);
		tg_skill_free(s);
	}
	return status;
}

int cli_folder_manifest(const char *dir, const struct key_opts *o)
{
	char who[40];
	int status = 0;
	struct tg_skill *s;

	snprintf(who, sizeof(who), "%s manifest", o->cmd);
	s = load(who, dir, o->folder, &status);

	if (!s)
		return status;
	fputs(s->manifest, stdout);
	tg_skill_free(s);
	return 0;
}

static int cmd_keygen(const struct key_opts *o)
{
	struct tg_sign_pub pub;
	struct tg_sign_sec sec;
	struct tg_error err;
	char *password = NULL, *sec_text = NULL, *pub_text = NULL, hex[17];
	int rc = EXIT_DATA;

	if (!o->secret || !o->public || (!o->password_file == !o->no_password)) {
		fprintf(stderr, "toolgate skill keygen: takes --secret-key FILE --public-key FILE "
				"and one of --password-file FILE or --no-password\n");
		return EXIT_USAGE;
	}
	if (strcmp(o->secret, o->public) == 0) {
		fprintf(stderr, "toolgate skill keygen: --secret-key and --public-key name the same "
				"file\n");
		return EXIT_USAGE;
	}
	if (o->password_file && !(password = read_password("skill keygen", o->password_file)))
		return EXIT_DATA;
	if (tg_sign_keygen(&pub, &sec, &err) < 0 ||
	    !(sec_text = tg_sign_sec_format(&sec, password, &err))) {
		cli_skill_say("skill keygen", "%s", err.msg);
		goto out;
	}
	pub_text = tg_sign_pub_format(&pub);
	if (!pub_text) {
		fprintf(stderr, "toolgate skill keygen: out of memory\n");
		goto out;
	}
	if (write_new("skill keygen", o->secret, sec_text, 0600) < 0)
		goto out;
	if (write_new("skill keygen", o->public, pub_text, 0644) < 0) {
		unlink(o->secret);
		goto out;
	}
	tg_sign_keyid_hex(pub.id, hex);
	printf("key %s: secret key in %s%s, public key in %s\n", hex, o->secret,
	       password ? "" : " (not encrypted)", o->public);
	rc = 0;
out:
	tg_sign_sec_release(&sec);
	secret_free(password);
	secret_free(sec_text);
	free(pub_text);
	return rc;
}

/* The secret key at path, opened with the password in password_file (or
 * none): 0, or the exit status having said why. */
static int read_secret(const char *who, const char *path, const char *password_file,
		       struct tg_sign_sec *sec)
{
	struct tg_error err;
	size_t len;
	char *text = file_read_all(path, TG_SIGN_FILE_MAX, 1, &len), *password = NULL;
	int rc;

	if (!text) {
		fprintf(stderr, "toolgate %s: --secret-key %s: %s\n", who, path,
			errno == EFBIG ? "over 4096 bytes: not a minisign key" : strerror(errno));
		return EXIT_DATA;
	}
	if (password_file && !(password = read_password(who, password_file))) {
		sodium_memzero(text, len);
		free(text);
		return EXIT_DATA;
	}
	rc = tg_sign_sec_parse(text, len, password, sec, &err);
	sodium_memzero(text, len);
	free(text);
	secret_free(password);
	if (rc < 0) {
		cli_skill_say(who, "--secret-key %s: %s%s", path, err.msg,
			      !password_file && strstr(err.msg, "no password")
				      ? " (its password's file: --password-file FILE)"
				      : "");
		return EXIT_DATA;
	}
	return 0;
}

int cli_folder_sign(const char *dir, const struct key_opts *o)
{
	struct tg_sign_sec sec;
	struct tg_sign_pub pub;
	struct tg_error err;
	struct tg_skill *s;
	char comment[512], hex[17], what[512], version[80], who[40], *sig = NULL;
	int rc = 0, dfd = -1;

	snprintf(who, sizeof(who), "%s sign", o->cmd);
	if (!o->secret) {
		fprintf(stderr, "toolgate %s: takes --secret-key FILE\n", who);
		return EXIT_USAGE;
	}
	s = load(who, dir, o->folder, &rc);
	if (!s)
		return rc;
	rc = read_secret(who, o->secret, o->password_file, &sec);
	if (rc)
		goto out;
	/* what minisign writes, and the skill's name and version: the version
	 * at most 64 bytes, a character whole, its controls as '?' (a trusted
	 * comment is one line of UTF-8) */
	version[0] = '\0';
	if (s->meta.version) {
		const unsigned char *v = (const unsigned char *)s->meta.version;
		size_t n = utf8_cut(s->meta.version, strlen(s->meta.version), 64), at = 0, k;
		uint32_t cp;

		/* C0, DEL and C1 (U+0080-U+009F), which tg_sign_data refuses in a
		 * trusted comment: each a '?' */
		for (size_t i = 0; i < n; i += k) {
			k = utf8_char(v + i, n - i, &cp);
			if (!k) { /* YAML gave UTF-8: never */
				k = 1;
				cp = 0;
			}
			if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) {
				version[at++] = '?';
			} else {
				memcpy(version + at, v + i, k);
				at += k;
			}
		}
		version[at] = '\0';
	}
	if (o->folder) /* a catalogue: what it is, by its folder's name (no tab in it) */
		snprintf(comment, sizeof(comment), "timestamp:%lld\tfile:%s\tcatalog",
			 (long long)time(NULL), TG_SKILL_MANIFEST);
	else
		snprintf(comment, sizeof(comment), "timestamp:%lld\tfile:%s\tskill:%s\tversion:%s",
			 (long long)time(NULL), TG_SKILL_MANIFEST, s->meta.name, version);
	sig = tg_sign_data(&sec, s->manifest, strlen(s->manifest), comment, &err);
	if (!sig) {
		cli_skill_say(who, "%s", err.msg);
		rc = EXIT_DATA;
		goto out;
	}
	rc = EXIT_DATA;
	dfd = tg_skill_dir_open(s, &err);
	if (dfd < 0) {
		cli_say(stderr, who, err.msg);
		goto out;
	}
	if (write_over(who, dfd, dir, TG_SKILL_MANIFEST, s->manifest) < 0 ||
	    write_over(who, dfd, dir, TG_SKILL_SIGNATURE, sig) < 0)
		goto out;
	tg_sign_sec_pub(&sec, &pub);
	tg_sign_keyid_hex(pub.id, hex);
	describe(s, what, sizeof(what));
	printf("%s: signed by key %s: %s\n", dir, hex, what);
	rc = 0;
out:
	if (dfd >= 0)
		close(dfd);
	tg_sign_sec_release(&sec);
	free(sig);
	tg_skill_free(s);
	return rc;
}

/* A trust store of the one key at path, named by its id. */
static int trust_of_key(const char *who, const char *path, struct tg_trust **out)
{
	struct tg_trust *t = calloc(1, sizeof(*t));
	struct tg_error err;
	size_t len;
	char *text = file_read_all(path, TG_SIGN_FILE_MAX, 1, &len), hex[17];

	*out = NULL;
	if (!text || !t || !(t->keys = calloc(1, sizeof(*t->keys)))) {
		fprintf(stderr, "toolgate %s: --public-key %s: %s\n", who, path,
			!text && errno == EFBIG ? "over 4096 bytes: not a minisign key"
						: strerror(text ? ENOMEM : errno));
		goto fail;
	}
	if (tg_sign_pub_parse(text, len, &t->keys[0].key, &err) < 0) {
		cli_skill_say(who, "--public-key %s: %s", path, err.msg);
		goto fail;
	}
	tg_sign_keyid_hex(t->keys[0].key.id, hex);
	t->n = 1;
	if (!(t->keys[0].publisher = strdup(hex)))
		goto fail;
	free(text);
	*out = t;
	return 0;
fail:
	free(text);
	tg_trust_free(t);
	return EXIT_DATA;
}

int cli_folder_verify(char **dirs, int n, const struct key_opts *o)
{
	struct tg_trust *trust = NULL;
	struct tg_error err;
	char who[40];
	int status = 0;

	snprintf(who, sizeof(who), "%s verify", o->cmd);

	if (!o->trust == !o->public) {
		fprintf(stderr, "toolgate %s: takes one of --trust FILE or --public-key FILE\n",
			who);
		return EXIT_USAGE;
	}
	if (o->trust && tg_trust_load(o->trust, &trust, &err) < 0) {
		cli_skill_say(who, "%s", err.msg);
		return EXIT_DATA;
	}
	if (o->public && (status = trust_of_key(who, o->public, &trust)) != 0)
		return status;
	for (int i = 0; i < n; i++) {
		struct tg_skill *s;
		enum tg_verdict v;
		char publisher[160], what[512];
		int st = 0;

		s = load(who, dirs[i], o->folder, &st);
		if (!s) {
			status = status ? status : st;
			continue;
		}
		v = tg_skill_verify(s, trust, time(NULL), publisher, sizeof(publisher), &err);
		if (v != TG_VERDICT_OK) {
			cli_skill_say(who, "%s: %s", tg_verdict_name(v), err.msg);
			status = status ? status : EXIT_NO;
		} else {
			describe(s, what, sizeof(what));
			printf("%s: signed by ", dirs[i]);
			cli_put_text(stdout, publisher);
			printf(": %s\n", what);
		}
		tg_skill_free(s);
	}
	tg_trust_free(trust);
	return status;
}

/* An option given that verb v does not take, said: 1; else 0. */
static int unexpected(const char *who, size_t v, const struct key_opts *o)
{
	static const char *const takes[] = { "", "", "sPwn", "sw", "tP" };
	const struct {
		char c;
		const char *name;
		int given;
	} given[] = {
		{ 's', "--secret-key", o->secret != NULL },
		{ 'P', "--public-key", o->public != NULL },
		{ 'w', "--password-file", o->password_file != NULL },
		{ 'n', "--no-password", o->no_password },
		{ 't', "--trust", o->trust != NULL },
	};

	for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++)
		if (given[i].given && !strchr(takes[v], given[i].c)) {
			fprintf(stderr, "toolgate %s: does not take %s\n", who, given[i].name);
			return 1;
		}
	return 0;
}

static int set_opt(int opt, const char *arg, void *ctx)
{
	(void)arg;
	if (opt == 'n')
		((struct key_opts *)ctx)->no_password = 1;
	return 0;
}

static const struct option options[] = {
	CLI_OPTION_HELP,
	{ "secret-key", required_argument, NULL, 's' },
	{ "public-key", required_argument, NULL, 'P' },
	{ "password-file", required_argument, NULL, 'w' },
	{ "no-password", no_argument, NULL, 'n' },
	{ "trust", required_argument, NULL, 't' },
	CLI_OPTION_END,
};

int cmd_skill(int argc, char **argv)
{
	static const char *const verbs[] = { "check", "manifest", "keygen", "sign", "verify" };
	struct key_opts o = { .cmd = "skill" };
	const struct cli_bind binds[] = {
		{ 's', &o.secret }, { 'P', &o.public }, { 'w', &o.password_file },
		{ 't', &o.trust },  { 0, NULL },
	};
	char who[32], **ops;
	size_t v;
	int opt, n;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "trust") == 0)
		return cli_skill_trust(argc - 1, argv + 1);
	if (strcmp(argv[1], "scan") == 0 || strcmp(argv[1], "rules") == 0)
		return cli_skill_scan(argc - 1, argv + 1);
	if (!strcmp(argv[1], "install") || !strcmp(argv[1], "remove") || !strcmp(argv[1], "list") ||
	    !strcmp(argv[1], "show"))
		return cli_skill_install(argc - 1, argv + 1);
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (strcmp(argv[1], verbs[v]) == 0)
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0])) {
		fprintf(stderr, "toolgate skill: unknown command '%s' (check, manifest, keygen, "
				"sign, verify, scan, rules, install, remove, list, show or trust)\n",
			argv[1]);
		return EXIT_USAGE;
	}
	snprintf(who, sizeof(who), "skill %s", verbs[v]);
	opt = cli_parse(who, argc - 1, argv + 1, ":h", options, usage, binds, set_opt, &o);
	if (opt >= 0)
		return opt;
	ops = argv + 1 + optind;
	n = argc - 1 - optind;
	if (unexpected(who, v, &o))
		return EXIT_USAGE;
	if ((v == 2 && n != 0) || ((v == 1 || v == 3) && n != 1) || ((v == 0 || v == 4) && n < 1)) {
		fprintf(stderr, "toolgate %s: takes %s (%d argument%s given)\n", who,
			v == 2 ? "no argument" : v == 0 || v == 4 ? "DIR..." : "DIR", n,
			n == 1 ? "" : "s");
		return EXIT_USAGE;
	}
	switch (v) {
	case 0:
		return cmd_check(ops, n);
	case 1:
		return cli_folder_manifest(ops[0], &o);
	case 2:
		return cmd_keygen(&o);
	case 3:
		return cli_folder_sign(ops[0], &o);
	default:
		return cli_folder_verify(ops, n, &o);
	}
}
