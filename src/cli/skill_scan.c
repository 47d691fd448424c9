/*
 * toolgate skill scan DIR... [--sarif] [--threshold SEVERITY] [--rules FILE]
 * toolgate skill rules [--rules FILE] [--json]
 *
 * The scanner over skills (docs/SKILLS.md, "Scanning"): each skill read
 * as check reads it, then its files by the rules, nothing run. Findings as
 * text for a person (every string in its display form) or as SARIF 2.1.0
 * for a code-scanning service. The status is 0 only when every skill is
 * well-formed and no finding is at or above the threshold (high unless
 * said).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/skill_int.h"
#include "toolgate/skill.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate skill scan DIR... [--sarif] [--threshold SEVERITY] [--rules FILE]\n"
		   "       toolgate skill rules [--rules FILE] [--json]\n"
		   "\n"
		   "SEVERITY: low, medium, high (the default) or critical. --rules FILE: an\n"
		   "operator's rules, added to the built-in ones (docs/SKILLS.md). Exit status:\n"
		   "0; 1 a skill malformed, or a finding at or above the threshold; 2 usage;\n"
		   "3 a folder or the rules file missing, unreadable or malformed.\n");
}

static const struct option options[] = {
	CLI_OPTION_HELP,
	{ "sarif", no_argument, NULL, 'S' },
	{ "threshold", required_argument, NULL, 'T' },
	{ "rules", required_argument, NULL, 'R' },
	{ "json", no_argument, NULL, 'J' },
	CLI_OPTION_END,
};

struct scan_opts {
	const char *threshold, *rules;
	int sarif, json;
};

static int set_flag(int opt, const char *arg, void *ctx)
{
	(void)arg;
	if (opt == 'S')
		((struct scan_opts *)ctx)->sarif = 1;
	if (opt == 'J')
		((struct scan_opts *)ctx)->json = 1;
	return 0;
}

/* A finding for a person: where, how bad, which rule, what, and the line. */
static void put_finding(const struct tg_skill *s, const struct tg_skill_finding *f)
{
	printf("%s/", s->dir);
	cli_put_text(stdout, f->path);
	printf(":%u:%u: %s %s: %s", f->line, f->column, tg_severity_name(f->severity), f->rule,
	       f->message);
	if (f->note[0]) {
		fputs(" (", stdout);
		cli_put_text(stdout, f->note);
		fputc(')', stdout);
	}
	/* the excerpt is in its display form already */
	printf("\n    %s\n", f->excerpt);
}

static int cmd_rules(const struct tg_skill_rules *rules, int json)
{
	size_t n = tg_skill_rules_count(rules);

	if (json) {
		char *text = tg_skill_rules_json(rules);

		if (!text) {
			cli_skill_say("skill rules", "out of memory");
			return EXIT_DATA;
		}
		puts(text);
		free(text);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const char *id, *family, *description;
		enum tg_severity sev;

		tg_skill_rules_get(rules, i, &id, &family, &sev, &description);
		printf("%-34s %-8s %s\n", id, tg_severity_name(sev), description);
	}
	printf("%zu rules\n", n);
	return 0;
}

struct scanned {
	struct tg_skill **skills;
	struct tg_skill_report *reports;
	size_t n;
};

static void scanned_release(struct scanned *sc)
{
	for (size_t i = 0; i < sc->n; i++) {
		tg_skill_report_release(&sc->reports[i]);
		tg_skill_free(sc->skills[i]);
	}
	free(sc->skills);
	free(sc->reports);
}

/* The summary line of one skill, and whether it passes. */
static int summary(const struct tg_skill *s, const struct tg_skill_report *r,
		   enum tg_severity threshold)
{
	size_t at_or_above = 0;

	for (size_t i = 0; i < r->n; i++)
		at_or_above += r->findings[i].severity >= threshold;
	printf("%s: %s: %zu finding%s in %zu of %zu files", s->dir, s->meta.name, r->total,
	       r->total == 1 ? "" : "s", r->files_scanned, s->n_files);
	if (r->total)
		printf(" (worst %s; %zu at or above %s)", tg_severity_name(r->worst), at_or_above,
		       tg_severity_name(threshold));
	if (r->total > r->n)
		printf("; the first %zu shown", r->n);
	putchar('\n');
	return r->worst >= threshold;
}

static int scan_all(char **dirs, int n, const struct scan_opts *o, struct tg_skill_rules *rules,
		    enum tg_severity threshold)
{
	struct scanned sc = { 0 };
	int status = 0;

	sc.skills = calloc((size_t)n, sizeof(*sc.skills));
	sc.reports = calloc((size_t)n, sizeof(*sc.reports));
	if (!sc.skills || !sc.reports) {
		scanned_release(&sc);
		return EXIT_DATA;
	}
	for (int i = 0; i < n; i++) {
		struct tg_skill *s;
		struct tg_error err;

		if (tg_skill_load(dirs[i], &s, &err) < 0) {
			cli_skill_say("skill scan", "%s", err.msg);
			status = status ? status : cli_skill_status(&err);
			continue;
		}
		sc.skills[sc.n] = s;
		if (tg_skill_scan(s, rules, &sc.reports[sc.n], &err) < 0) {
			sc.n++;
			cli_skill_say("skill scan", "%s", err.msg);
			status = EXIT_DATA;
			break;
		}
		sc.n++;
	}
	for (size_t i = 0; i < sc.n && status != EXIT_DATA; i++) {
		const struct tg_skill_report *r = &sc.reports[i];

		if (!o->sarif)
			for (size_t k = 0; k < r->n; k++)
				put_finding(sc.skills[i], &r->findings[k]);
		if ((o->sarif ? r->worst >= threshold : summary(sc.skills[i], r, threshold)) &&
		    !status)
			status = EXIT_NO;
	}
	if (o->sarif && status != EXIT_DATA) {
		char *text = tg_skill_sarif((const struct tg_skill *const *)sc.skills, sc.reports,
					    sc.n, rules);

		if (!text) {
			cli_skill_say("skill scan", "out of memory");
			status = EXIT_DATA;
		} else {
			puts(text);
			free(text);
		}
	}
	scanned_release(&sc);
	return status;
}

int cli_skill_scan(int argc, char **argv)
{
	struct scan_opts o = { 0 };
	const struct cli_bind binds[] = { { 'T', &o.threshold }, { 'R', &o.rules }, { 0, NULL } };
	struct tg_skill_rules *rules;
	struct tg_error err;
	enum tg_severity threshold = TG_SEVERITY_HIGH;
	int rules_verb = strcmp(argv[0], "rules") == 0, opt, n, rc;
	const char *who = rules_verb ? "skill rules" : "skill scan";

	opt = cli_parse(who, argc, argv, ":h", options, usage, binds, set_flag, &o);
	if (opt >= 0)
		return opt;
	n = argc - optind;
	if (rules_verb ? (n != 0 || o.sarif || o.threshold) : (n < 1 || o.json)) {
		fprintf(stderr, "toolgate %s: takes %s\n", who,
			rules_verb ? "only [--rules FILE] [--json]"
				   : "DIR... [--sarif] [--threshold SEVERITY] [--rules FILE]");
		return EXIT_USAGE;
	}
	if (o.threshold && tg_severity_parse(o.threshold, &threshold) < 0) {
		fprintf(stderr, "toolgate %s: --threshold '%s': low, medium, high or critical\n",
			who, o.threshold);
		return EXIT_USAGE;
	}
	if (tg_skill_rules_new(o.rules, &rules, &err) < 0) {
		cli_skill_say(who, "%s", err.msg);
		return EXIT_DATA;
	}
	rc = rules_verb ? cmd_rules(rules, o.json) : scan_all(argv + optind, n, &o, rules, threshold);
	tg_skill_rules_free(rules);
	return rc;
}
