/*
 * toolgate skill install DIR --skills SKILLS --trust FILE [--rules FILE]
 * toolgate skill remove NAME --skills SKILLS
 * toolgate skill list --skills SKILLS [--trust FILE] [--rules FILE]
 * toolgate skill show DIR [--trust FILE] [--rules FILE]
 *
 * The operator's skills folder, the one serve --skills reads
 * (docs/SKILLS.md, "Installing"). install checks a skill as serve would
 * (well-formed, signed by a key of the store, unchanged, scanned below
 * high) and writes the bytes it checked, not the folder's again, into
 * SKILLS/NAME by a rename: the folder served is whole or absent. A skill
 * already there under the same version with other files is refused: a
 * change is a new version. remove takes one out; list says what serve
 * would make of each; show tells one skill's fields, files and findings.
 */
#include <dirent.h>
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
#include "toolgate/contract.h"
#include "toolgate/skill.h"
#include "util/file.h"
#include "util/sodium.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate skill install DIR --skills SKILLS --trust FILE [--rules FILE]\n"
		   "       toolgate skill remove NAME --skills SKILLS\n"
		   "       toolgate skill list --skills SKILLS [--trust FILE] [--rules FILE]\n"
		   "       toolgate skill show DIR [--trust FILE] [--rules FILE]\n"
		   "\n"
		   "SKILLS: the folder serve --skills reads. Exit status: 0; 1 a skill refused\n"
		   "(malformed, unsigned, untrusted, tampered, a finding at or above high, or\n"
		   "changed under the same version), or no such skill; 2 usage; 3 a folder,\n"
		   "store or rules file missing or unreadable, or a write that failed.\n");
}

static const struct option options[] = {
	CLI_OPTION_HELP,
	{ "skills", required_argument, NULL, 'S' },
	{ "trust", required_argument, NULL, 't' },
	{ "rules", required_argument, NULL, 'R' },
	CLI_OPTION_END,
};

struct install_opts {
	const char *skills, *trust, *rules;
};

/* What serve would make of s: NULL when served, else the reason, with
 * why (trust NULL: the signature not looked at). */
static const char *judge(const struct tg_skill *s, const struct tg_trust *trust,
			 const struct tg_skill_rules *rules, struct tg_skill_judgement *j,
			 const char **why)
{
	const char *reason;
	struct tg_error err;
	size_t n;

	*why = "";
	if (tg_skill_judge(s, trust, rules, time(NULL), j, &err) < 0) {
		snprintf(j->scan, sizeof(j->scan), "%s", err.msg);
		*why = j->scan;
		return "scan";
	}
	reason = tg_skill_judgement_reason(j, why);
	if (reason)
		return reason;
	/* its tools too: serve refuses a skill whose toolgate.json it refuses */
	if (cli_skill_tools_check(s, &n, &err) < 0) {
		snprintf(j->scan, sizeof(j->scan), "%s", err.msg);
		*why = j->scan;
		return "malformed";
	}
	return NULL;
}

/* The skill's files as checked, its manifest and its signature, into a
 * new folder tmp: 0, or -1 and err. */
static int write_copy(const struct tg_skill *s, const char *tmp, struct tg_error *err)
{
	char path[4096], *sig;
	size_t len;
	ssize_t n = -1;
	int fd;

	if (tg_skill_write(s, tmp, TG_SKILL_WRITE_MANIFEST | TG_SKILL_WRITE_SYNC, err) < 0)
		return -1;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", s->dir, TG_SKILL_SIGNATURE) >=
	    sizeof(path))
		return tg_error_set(err, TG_ERR_LIMIT, "%s: path too long", s->dir);
	sig = file_read_all(path, TG_SIGN_FILE_MAX, 1, &len);
	if (!sig)
		return tg_error_sys(err, errno, "%s", path);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", tmp, TG_SKILL_SIGNATURE) >=
	    sizeof(path)) {
		free(sig);
		return tg_error_set(err, TG_ERR_LIMIT, "%s: path too long", tmp);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0)
		n = write(fd, sig, len);
	free(sig);
	if (fd < 0 || n != (ssize_t)len || fsync(fd) < 0) {
		tg_error_sys(err, n >= 0 && fd >= 0 ? EIO : errno, "%s", path);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return close(fd) < 0 ? tg_error_sys(err, errno, "%s", path) : 0;
}

/* SKILLS/NAME as installed already: 0 none, 1 the same, 2 another
 * version, -1 the same version with other files (said). */
static int installed(const char *skills, const struct tg_skill *s)
{
	char path[4096];
	struct tg_skill *old;
	struct tg_error err;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", skills, s->meta.name);
	if (access(path, F_OK) < 0)
		return 0;
	if (tg_skill_load(path, &old, &err) < 0)
		return 2; /* what is there is not a skill: replaced */
	if (!memcmp(old->digest, s->digest, sizeof(s->digest)))
		rc = 1;
	else if (old->meta.version && s->meta.version && !strcmp(old->meta.version, s->meta.version))
		rc = -1;
	else
		rc = 2;
	if (rc < 0)
		cli_skill_say("skill install", "%s: version %s is installed with other files: a "
				"change is a new version (metadata.version), or remove it first",
			      path, s->meta.version);
	tg_skill_free(old);
	return rc;
}

static int cmd_install(const char *dir, const struct install_opts *o,
		       const struct tg_trust *trust, const struct tg_skill_rules *rules)
{
	struct tg_skill *s;
	struct tg_skill_judgement j;
	struct tg_error err;
	const char *reason, *why;
	char tmp[4096], dest[4096], old[4096];
	int state, rc = EXIT_NO;

	if (tg_skill_load(dir, &s, &err) < 0) {
		cli_skill_say("skill install", "%s", err.msg);
		return cli_skill_status(&err);
	}
	reason = judge(s, trust, rules, &j, &why);
	if (reason)
		cli_skill_say("skill install", "%s: refused (%s): %s", dir, reason, why);
	tg_skill_judgement_release(&j);
	if (reason)
		goto out;
	state = installed(o->skills, s);
	if (state < 0)
		goto out;
	if (state == 1) {
		printf("%s: %s is installed already, the same files\n", o->skills, s->meta.name);
		rc = 0;
		goto out;
	}
	rc = EXIT_DATA;
	snprintf(dest, sizeof(dest), "%s/%s", o->skills, s->meta.name);
	snprintf(tmp, sizeof(tmp), "%s/.%s.install-%ld", o->skills, s->meta.name, (long)getpid());
	snprintf(old, sizeof(old), "%s/.%s.old-%ld", o->skills, s->meta.name, (long)getpid());
	file_remove_tree(tmp);
	if (write_copy(s, tmp, &err) < 0) {
		cli_skill_say("skill install", "%s", err.msg);
		file_remove_tree(tmp);
		goto out;
	}
	/* the old version aside, the new one in, the old one gone */
	if ((state == 2 && rename(dest, old) < 0) || rename(tmp, dest) < 0) {
		cli_skill_say("skill install", "%s: %s", dest, strerror(errno));
		file_remove_tree(tmp);
		if (state == 2)
			rename(old, dest);
		goto out;
	}
	if (state == 2)
		file_remove_tree(old);
	printf("%s: %s %s installed (%zu files)\n", o->skills, s->meta.name,
	       s->meta.version ? s->meta.version : "(no version)", s->n_files);
	rc = 0;
out:
	tg_skill_free(s);
	return rc;
}

static int cmd_remove(const char *name, const struct install_opts *o)
{
	char path[4096];
	struct stat st;

	if (!*name || strchr(name, '/') || name[0] == '.') {
		fprintf(stderr, "toolgate skill remove: '%s' is not a skill's name\n", name);
		return EXIT_USAGE;
	}
	snprintf(path, sizeof(path), "%s/%s", o->skills, name);
	if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "toolgate skill remove: %s: no such skill\n", path);
		return EXIT_NO;
	}
	if (file_remove_tree(path) < 0) {
		fprintf(stderr, "toolgate skill remove: %s: %s\n", path, strerror(errno));
		return EXIT_DATA;
	}
	printf("%s removed\n", path);
	return 0;
}

/* One skill's line of list: name, version, and what serve would do. */
static void list_one(const char *path, const struct tg_trust *trust,
		     const struct tg_skill_rules *rules)
{
	struct tg_skill *s;
	struct tg_skill_judgement j;
	struct tg_error err;
	const char *reason, *why;

	if (tg_skill_load(path, &s, &err) < 0) {
		printf("%-32s %-10s refused (malformed)\n", strrchr(path, '/') + 1, "-");
		return;
	}
	reason = judge(s, trust, rules, &j, &why);
	printf("%-32s %-10s %s%s%s%s\n", s->meta.name, s->meta.version ? s->meta.version : "-",
	       reason ? "refused (" : trust ? "served" : "well-formed, scanned",
	       reason ? reason : "", reason ? ")" : "",
	       !trust && !reason ? " (no --trust: not verified)" : "");
	tg_skill_judgement_release(&j);
	tg_skill_free(s);
}

static int cmd_list(const struct install_opts *o, const struct tg_trust *trust,
		    const struct tg_skill_rules *rules)
{
	DIR *d = opendir(o->skills);
	struct dirent *e;
	size_t n = 0;

	if (!d) {
		fprintf(stderr, "toolgate skill list: --skills %s: %s\n", o->skills, strerror(errno));
		return EXIT_DATA;
	}
	while ((e = readdir(d))) {
		char path[4096];
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", o->skills, e->d_name);
		if (lstat(path, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		list_one(path, trust, rules);
		n++;
	}
	closedir(d);
	printf("%zu skill%s\n", n, n == 1 ? "" : "s");
	return 0;
}

/* The tools s declares, what each may do: its authority, its script,
 * what of the gateway it is given, where it may connect. */
static void show_tools(const struct tg_skill *s)
{
	struct tg_skill_tool *t;
	struct tg_error err;
	size_t n;

	if (tg_skill_tools(s, s->dir, &t, &n, &err) < 0) {
		printf("tools: refused: ");
		cli_put_text(stdout, err.msg);
		putchar('\n');
		return;
	}
	printf("tools: %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		struct tg_contract *c;

		if (tg_contract_parse(t[i].contract, strlen(t[i].contract), t[i].origin, NULL, &c,
				      &err) < 0) {
			printf("  refused: ");
			cli_put_text(stdout, err.msg);
			putchar('\n');
			continue;
		}
		printf("  %s@%s  %s, %s tier, workspace %s, egress ", c->name, c->version_text,
		       c->authority == TG_AUTHORITY_WRITE ? "write" : "read",
		       c->tier == TG_TIER_STANDARD ? "standard" : "strict",
		       c->workspace == TG_WORKSPACE_WRITE  ? "write"
		       : c->workspace == TG_WORKSPACE_READ ? "read"
							   : "none");
		for (size_t e = 0; c->egress && c->egress[e]; e++)
			printf("%s%s", e ? " " : "", c->egress[e]);
		printf("%s\n    runs:", c->egress && c->egress[0] ? "" : "none");
		for (size_t a = 0; c->argv[a]; a++) {
			putchar(' ');
			cli_put_text(stdout, c->argv[a]);
		}
		putchar('\n');
		tg_contract_free(c);
	}
	tg_skill_tools_free(t, n);
}

static int cmd_show(const char *dir, const struct tg_trust *trust,
		    const struct tg_skill_rules *rules)
{
	struct tg_skill *s;
	struct tg_skill_judgement j;
	struct tg_error err;
	const char *reason, *why;
	char hex[65];

	if (tg_skill_load(dir, &s, &err) < 0) {
		cli_skill_say("skill show", "%s", err.msg);
		return cli_skill_status(&err);
	}
	sodium_bin2hex(hex, sizeof(hex), s->digest, sizeof(s->digest));
	printf("name: %s\nversion: ", s->meta.name);
	cli_put_text(stdout, s->meta.version ? s->meta.version : "-");
	printf("\ndescription: ");
	cli_put_text(stdout, s->meta.description);
	printf("\nlicense: ");
	cli_put_text(stdout, s->meta.license ? s->meta.license : "-");
	printf("\nmanifest: sha256:%s\nfiles:\n", hex);
	for (size_t i = 0; i < s->n_files; i++) {
		sodium_bin2hex(hex, sizeof(hex), s->files[i].sha256, 32);
		printf("  %10llu  %.16s  ", (unsigned long long)s->files[i].size, hex);
		cli_put_text(stdout, s->files[i].path);
		printf("%s\n", s->files[i].executable ? "  (executable)" : "");
	}
	show_tools(s);
	reason = judge(s, trust, rules, &j, &why);
	printf("findings: %zu (worst %s)\n", j.report.total,
	       j.report.total ? tg_severity_name(j.report.worst) : "none");
	printf("served: %s", reason ? "no, " : trust ? "yes" : "unknown (no --trust)");
	if (reason) {
		printf("%s: ", reason);
		cli_put_text(stdout, why);
	}
	putchar('\n');
	tg_skill_judgement_release(&j);
	tg_skill_free(s);
	return reason ? EXIT_NO : 0;
}

int cli_skill_install(int argc, char **argv)
{
	static const char *const verbs[] = { "install", "remove", "list", "show" };
	struct install_opts o = { 0 };
	const struct cli_bind binds[] = {
		{ 'S', &o.skills }, { 't', &o.trust }, { 'R', &o.rules }, { 0, NULL },
	};
	struct tg_trust *trust = NULL;
	struct tg_skill_rules *rules = NULL;
	struct tg_error err;
	char who[32];
	size_t v;
	int opt, n, rc;

	for (v = 0; v < 4 && strcmp(argv[0], verbs[v]) != 0; v++)
		;
	snprintf(who, sizeof(who), "skill %s", verbs[v]);
	opt = cli_parse(who, argc, argv, ":h", options, usage, binds, NULL, NULL);
	if (opt >= 0)
		return opt;
	n = argc - optind;
	if (n != (v == 2 ? 0 : 1) || (v != 3 && !o.skills) || (v == 3 && o.skills) ||
	    (v == 0 && !o.trust) || (v == 1 && (o.trust || o.rules))) {
		fprintf(stderr, "toolgate %s: takes %s\n", who,
			v == 0	 ? "DIR --skills SKILLS --trust FILE [--rules FILE]"
			: v == 1 ? "NAME --skills SKILLS"
			: v == 2 ? "--skills SKILLS [--trust FILE] [--rules FILE]"
				 : "DIR [--trust FILE] [--rules FILE]");
		return EXIT_USAGE;
	}
	if (o.skills) {
		struct stat st;
		int e = stat(o.skills, &st) < 0 ? errno : 0;

		if (e || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "toolgate %s: --skills %s: %s\n", who, o.skills,
				e ? strerror(e) : "not a folder");
			return EXIT_DATA;
		}
	}
	if (v == 1)
		return cmd_remove(argv[optind], &o);
	if ((o.trust && tg_trust_load(o.trust, &trust, &err) < 0) ||
	    tg_skill_rules_new(o.rules, &rules, &err) < 0) {
		cli_skill_say(who, "%s", err.msg);
		tg_trust_free(trust);
		return EXIT_DATA;
	}
	rc = v == 0   ? cmd_install(argv[optind], &o, trust, rules)
	     : v == 2 ? cmd_list(&o, trust, rules)
		      : cmd_show(argv[optind], trust, rules);
	tg_skill_rules_free(rules);
	tg_trust_free(trust);
	return rc;
}
