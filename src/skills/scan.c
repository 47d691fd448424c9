/*
 * The skill scanner (include/toolgate/skill.h, docs/SKILLS.md,
 * "Scanning"): a skill's files, as read and hashed by tg_skill_load, read
 * by the rules without running anything.
 *
 * A file is prose (SKILL.md, Markdown, text), code (scripts, and what a
 * script reads: requirements.txt, package.json), or binary (a NUL or a
 * byte that is not UTF-8: an image, a font), which no rule reads. Each
 * rule's pattern runs over the files of its class; then the scanner's own
 * rules: hidden characters (util/hidden.c's table, as the unicode anomaly
 * rule uses it), credentials (the redactor, src/obs/redact.c) and
 * dependencies (src/skills/deps.c). The description, as YAML decodes
 * it, is read as prose too when its escapes made it other than the bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "skills/skill_int.h"
#include "toolgate/redact.h"
#include "util/hidden.h"
#include "util/utf8.h"

#define PER_RULE_MAX 20		/* matches of one rule in one file, reported */
#define MATCH_LIMIT 1000000	/* PCRE2's, per match: a bounded cost a file */
#define DEPTH_LIMIT 10000
#define CAUTION_LINES 4		/* the lines before a match read for a caution */
#define CAUTION_BYTES 400	/* of each of those lines, and of the match's own line
				 * either side of it: a caution is near, and the cost
				 * of a finding does not grow with a line's length */
#define DESCRIPTION "SKILL.md#description" /* a finding's path in the description decoded */

/* Words that make prose around a dangerous example a caution, or a step
 * for the person rather than an order to the agent. */
static const char caution_pattern[] =
	/* not a word of an address: "attacker" in attacker.example is not one */
	"(?<![./@:\\w-])"
	"(never|don'?t|do\\s+not|avoid|instead\\s+of|dangerous|unsafe|insecure|risky|risk|"
	"attack(er|ers|s)?|malicious|malware|example\\s+of|anti-?pattern|bad\\s+practice|warning|"
	"beware|vulnerab\\w*|exploit\\w*|injection|phishing|red\\s+flag|suspicious|detect\\w*|"
	"flag(s|ged)?|block(s|ed)?|prevent\\w*|defen[cs]\\w*|refuse\\w*|reject\\w*|accident\\w*|"
	"mistake\\w*|stray|careful(ly)?|recogni[sz]e\\w*|audit\\w*|look\\s+for|check\\s+for|"
	"unexpected|review\\w*|fixture|"
	"the\\s+user('s)?\\s+(installs?|enables?|runs?|adds?|types?|can|may|should|decides?|step|"
	"job|choice|decision)|with\\s+the\\s+user'?s\\s+(agreement|consent|approval)|"
	"ask\\s+the\\s+user|(print|show|give)\\s+(these|this|it|them)\\s+(for|to)\\s+"
	"(the\\s+user|them))"
	"(?![\\w-]*\\.[a-z]{2,}\\b)(?!\\w)";

struct scan {
	const struct tg_skill *skill;
	const struct tg_skill_rules *rules;
	struct tg_skill_report *out;
	size_t cap;
	pcre2_code *caution;
	pcre2_match_data *md, *caution_md; /* a rule's match; the caution's around it */
	pcre2_match_context *mctx;
	struct tg_error *err;
	/* the file being scanned (or the description: DESCRIPTION) */
	const char *path;
	const char *text;
	size_t len;
	char *lower;   /* text in ASCII lower case, the two letters that fold
			* into ASCII (U+017F, U+212A) as 's' and 'k', a run of
			* white space as one space (\s+ in a pattern): for the
			* words a rule needs; shorter than text, never indexed
			* with its offsets */
	size_t lower_len;
	uint64_t found[WORDS_BITS / 64]; /* the rules' words the file has */
	struct timespec start;            /* of the scan, for its budget */
	int over;                         /* the budget is spent */
	size_t *lines; /* offsets where lines begin, made when first needed */
	size_t nlines;
	unsigned char *fence; /* per line: 1 inside a fenced block of Markdown or
			       * its ``` line (made with lines) */
	int nomem;
};

static const char *const code_suffixes[] = {
	".sh",	 ".bash", ".zsh", ".fish", ".py",  ".js",   ".mjs",  ".cjs",  ".ts",   ".rb",
	".pl",	 ".php",  ".ps1", ".psm1", ".bat", ".cmd",  ".go",   ".rs",   ".lua",  ".r",
	".java", ".kt",	  ".c",	  ".cc",   ".cpp", ".h",    ".swift", ".json", ".yaml", ".yml",
	".toml", ".cfg",  ".ini", ".mk",   ".gradle", NULL,
};
static const char *const code_names[] = {
	"Makefile", "Dockerfile", "Gemfile", "Pipfile", "setup.py", "package.json",
	"pyproject.toml", "Cargo.toml", "go.mod", NULL,
};

/* FILE_TEXT, FILE_CODE, or 0 for binary. */
static unsigned classify(const struct tg_skill_file *f)
{
	const char *base = strrchr(f->path, '/'), *dot;

	base = base ? base + 1 : f->path;
	if (memchr(f->data, '\0', f->size) || !utf8_valid(f->data, f->size))
		return 0;
	if (strncmp(f->path, "scripts/", 8) == 0 || strncmp(f->data, "#!", 2) == 0 ||
	    strncmp(base, "requirements", 12) == 0 || strncmp(base, "constraints", 11) == 0)
		return FILE_CODE;
	for (size_t i = 0; code_names[i]; i++)
		if (strcmp(base, code_names[i]) == 0)
			return FILE_CODE;
	dot = strrchr(base, '.');
	for (size_t i = 0; dot && code_suffixes[i]; i++)
		if (strcasecmp(dot, code_suffixes[i]) == 0)
			return FILE_CODE;
	return FILE_TEXT;
}

static size_t line_end(const struct scan *s, size_t line);

/* Which lines are inside a fenced code block of Markdown (opened and
 * closed by lines starting with ``` or ~~~, up to three spaces in), the
 * fence lines included: once a file, not once a finding. */
static void index_fences(struct scan *s)
{
	int inside = 0;

	for (size_t l = 0; l < s->nlines; l++) {
		const char *p = s->text + s->lines[l];
		size_t room = line_end(s, l) - s->lines[l], k = 0;
		int mark;

		while (k < 3 && k < room && p[k] == ' ')
			k++;
		mark = room - k >= 3 && (!memcmp(p + k, "```", 3) || !memcmp(p + k, "~~~", 3));
		s->fence[l] = (unsigned char)(inside || mark);
		if (mark)
			inside = !inside;
	}
}

/* Where each line of the file begins (once). */
static int index_lines(struct scan *s)
{
	size_t n = 1;

	if (s->lines)
		return 0;
	for (size_t i = 0; i < s->len; i++)
		n += s->text[i] == '\n';
	s->lines = malloc(n * sizeof(*s->lines));
	s->fence = malloc(n);
	if (!s->lines || !s->fence) {
		free(s->lines);
		free(s->fence);
		s->lines = NULL;
		s->fence = NULL;
		return -1;
	}
	s->lines[0] = 0;
	s->nlines = 1;
	for (size_t i = 0; i < s->len; i++)
		if (s->text[i] == '\n')
			s->lines[s->nlines++] = i + 1;
	index_fences(s);
	return 0;
}

/* The line (index from 0) offset at is on. */
static size_t line_at(const struct scan *s, size_t at)
{
	size_t lo = 0, hi = s->nlines;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (s->lines[mid] <= at)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static size_t line_end(const struct scan *s, size_t line)
{
	size_t end = line + 1 < s->nlines ? s->lines[line + 1] - 1 : s->len;

	return end > s->lines[line] && s->text[end - 1] == '\r' ? end - 1 : end;
}

/* The excerpt of [at, at + len): the line around it, hidden characters
 * escaped, at most sizeof(f->excerpt) - 1 bytes. */
static void excerpt(const struct scan *s, size_t line, size_t at, size_t len, char *out,
		    size_t cap)
{
	size_t from = s->lines[line], to = line_end(s, line);

	if (at > from + 40)
		from = at - 40;
	while (from < at && ((unsigned char)s->text[from] & 0xC0) == 0x80)
		from++;
	if (to > at + len + 60)
		to = at + len + 60;
	if (to < from)
		to = from;
	to = from + utf8_cut(s->text + from, s->len - from, to - from);
	hidden_display(s->text + from, to - from, out, cap, NULL);
}

/* A finding of rule at [at, at + len) of the current file. */
static int add(struct scan *s, const struct skill_rule *r, size_t at, size_t len,
	       enum tg_severity severity, const char *note, int secret)
{
	struct tg_skill_report *o = s->out;
	struct tg_skill_finding *f;
	size_t line;

	o->total++;
	if (severity > o->worst)
		o->worst = severity;
	if (o->n == TG_SKILL_FINDINGS_MAX)
		return 0;
	if (index_lines(s) < 0)
		return -1;
	if (o->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct tg_skill_finding *more = reallocarray(o->findings, cap, sizeof(*more));

		if (!more)
			return -1;
		o->findings = more;
		s->cap = cap;
	}
	f = &o->findings[o->n++];
	memset(f, 0, sizeof(*f));
	line = line_at(s, at);
	f->rule = r->id;
	f->family = r->family;
	f->severity = severity;
	f->message = r->description;
	if (note) {
		/* a note may hold the skill's text (a package, a URL): cut
		 * whole characters, or SARIF's JSON refuses the string */
		size_t n = utf8_cut(note, strlen(note), sizeof(f->note) - 1);

		memcpy(f->note, note, n);
		f->note[n] = '\0';
	}
	f->path = s->path;
	f->line = (unsigned)(line + 1);
	f->column = 1; /* in code points, as SARIF's unicodeCodePoints counts */
	for (size_t i = s->lines[line]; i < at; i++)
		f->column += ((unsigned char)s->text[i] & 0xC0) != 0x80;
	if (secret)
		snprintf(f->excerpt, sizeof(f->excerpt), "[REDACTED:%s]", note);
	else
		excerpt(s, line, at, len, f->excerpt, sizeof(f->excerpt));
	return 0;
}

/* 1 when [at, at + len) is inside double quotes on its line (straight or
 * curly): a phrase quoted, as an example is, not said. */
static int quoted(const struct scan *s, size_t at, size_t len)
{
	size_t line = line_at(s, at), from = s->lines[line], to = line_end(s, line);
	int before = 0, after = 0;

	/* CAUTION_BYTES either side: a phrase quoted is near its quotes,
	 * and a finding's cost does not grow with its line */
	if (at - from > CAUTION_BYTES)
		from = at - CAUTION_BYTES;
	if (to > at + len && to - (at + len) > CAUTION_BYTES)
		to = at + len + CAUTION_BYTES;
	for (size_t i = from; i < at; i++)
		before += s->text[i] == '"' ||
			  (i + 2 < at && !memcmp(s->text + i, "\xe2\x80\x9c", 3));
	for (size_t i = at + len; i < to; i++)
		after += s->text[i] == '"' ||
			 (i + 2 < to && !memcmp(s->text + i, "\xe2\x80\x9d", 3));
	return (before & 1) && after > 0;
}

/* 1 when the prose around [at, at + len) quotes it, or (quoted_only 0)
 * cautions: the match's line, the match itself left out, and the lines
 * just before it, CAUTION_BYTES of the line after the match and
 * CAUTION_LINES times as many before it. An instruction to the model is
 * lowered only when quoted ("never ask the user" is the instruction, not
 * a caution); a command also beside a caution, and quoted only outside a
 * fenced block of code (a shell line's quotes are its own). */
static int cautioned(struct scan *s, size_t at, size_t len, int quoted_only)
{
	size_t line = line_at(s, at), first = line > CAUTION_LINES ? line - CAUTION_LINES : 0;
	size_t spans[2][2] = { { s->lines[first], at }, { at + len, line_end(s, line) } };

	if (quoted(s, at, len) && (quoted_only || !s->fence[line]))
		return 1;
	/* bounded: a finding costs the same on a line of 8 MiB */
	if (spans[0][1] - spans[0][0] > CAUTION_LINES * CAUTION_BYTES)
		spans[0][0] = spans[0][1] - CAUTION_LINES * CAUTION_BYTES;
	while (spans[0][0] < at && ((unsigned char)s->text[spans[0][0]] & 0xC0) == 0x80)
		spans[0][0]++;
	if (spans[1][1] > spans[1][0] && spans[1][1] - spans[1][0] > CAUTION_BYTES)
		spans[1][1] = spans[1][0] + utf8_cut(s->text + spans[1][0], s->len - spans[1][0],
						     CAUTION_BYTES);
	for (int i = 0; i < 2 && !quoted_only; i++) {
		if (spans[i][1] <= spans[i][0])
			continue;
		if (pcre2_match(s->caution, (PCRE2_SPTR)s->text + spans[i][0],
				spans[i][1] - spans[i][0], 0, PCRE2_NO_UTF_CHECK, s->caution_md,
				s->mctx) >= 0)
			return 1;
	}
	return 0;
}

/* 1 when the file has one of r's words, or r has none. */
static int has_words(const struct scan *s, const struct skill_rule *r)
{
	if (!r->need)
		return 1;
	for (int k = 0; k < WORDS_BITS / 64; k++)
		if (r->need_mask[k] & s->found[k])
			return 1;
	return 0;
}

/* s->lower made from the file's text. */
static int lower_case(struct scan *s)
{
	size_t n = 0;

	s->lower = malloc(s->len + 1);
	if (!s->lower)
		return -1;
	for (size_t i = 0; i < s->len; i++) {
		unsigned char c = (unsigned char)s->text[i];

		if (c == 0xC5 && i + 1 < s->len && (unsigned char)s->text[i + 1] == 0xBF) {
			s->lower[n++] = 's'; /* U+017F, long s */
			i++;
		} else if (c == 0xE2 && i + 2 < s->len && (unsigned char)s->text[i + 1] == 0x84 &&
			   (unsigned char)s->text[i + 2] == 0xAA) {
			s->lower[n++] = 'k'; /* U+212A, Kelvin sign */
			i += 2;
		} else if (c && strchr(" \t\n\v\f\r", c)) {
			/* \s+ in a pattern, one space in a word ("rest of") */
			if (n == 0 || s->lower[n - 1] != ' ')
				s->lower[n++] = ' ';
		} else {
			s->lower[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
		}
	}
	s->lower_len = n;
	return 0;
}

/* 1 once the scan has run TG_SKILL_SCAN_BUDGET_S: it stops, and says so
 * by a finding (a skill cannot make its scan endless, whatever the
 * patterns cost on its text). */
static int over_budget(struct scan *s)
{
	struct timespec now;

	if (!s->over) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		s->over = now.tv_sec - s->start.tv_sec > TG_SKILL_SCAN_BUDGET_S;
	}
	return s->over;
}

static int run_rule(struct scan *s, const struct skill_rule *r, unsigned cls)
{
	size_t start = 0;
	int hits = 0;

	while (start <= s->len && hits < PER_RULE_MAX) {
		PCRE2_SIZE *ov;
		size_t at, len;
		int rc = pcre2_match(r->re, (PCRE2_SPTR)s->text, s->len, start, PCRE2_NO_UTF_CHECK,
				     s->md, s->mctx);

		if (rc == PCRE2_ERROR_NOMATCH)
			return 0;
		if (rc < 0) {
			/* PCRE2's limits (counted per start position): what follows
			 * is unread by this rule. Said, at the rule's severity, or a
			 * line that backtracks badly hides the rest of the file. */
			if (index_lines(s) < 0)
				return -1;
			return add(s, r, start, 1, r->severity,
				   "the rule stopped here at PCRE2's match limit: the rest of "
				   "the file is unread by it",
				   0);
		}
		ov = pcre2_get_ovector_pointer(s->md);
		at = ov[0];
		len = ov[1] - ov[0];
		if (index_lines(s) < 0)
			return -1;
		if (r->teaching && cls == FILE_TEXT && cautioned(s, at, len, r->teaching == 2)) {
			if (add(s, r, at, len, TG_SEVERITY_LOW,
				r->teaching == 2 ? "quoted in prose" : "in prose that cautions against it",
				0) < 0)
				return -1;
		} else if (add(s, r, at, len, r->severity, NULL, 0) < 0) {
			return -1;
		}
		hits++;
		start = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
		while (start < s->len && ((unsigned char)s->text[start] & 0xC0) == 0x80)
			start++;
	}
	return 0;
}

/* A code rule's finding, when the rule is on and has no pattern. */
static int add_code(struct scan *s, const char *id, size_t at, size_t len, const char *note,
		    int secret)
{
	const struct skill_rule *r = rules_find(s->rules, id);

	if (!r || r->off || r->re)
		return 0;
	return add(s, r, at, len, r->severity, note, secret);
}

static const char *hidden_rule(const struct hidden *c, const struct scan *s)
{
	switch (c->kind) {
	case HIDDEN_TAG:
		return c->anomalous ? "hidden-unicode/tag-characters" : NULL;
	case HIDDEN_BIDI:
		return "hidden-unicode/bidi-control";
	case HIDDEN_CONTROL:
		if (c->cp == '\r' && c->at + 1 < s->len && s->text[c->at + 1] == '\n')
			return NULL;
		return c->cp == '\f' || c->cp == '\r' ? NULL : "hidden-unicode/control";
	case HIDDEN_INVISIBLE:
	case HIDDEN_FORMAT:
	case HIDDEN_VARIATION:
	case HIDDEN_IGNORABLE:
		return c->anomalous ? "hidden-unicode/invisible" : NULL;
	default:
		return NULL;
	}
}

/* Hidden characters: a finding for the first of each rule in the file,
 * with how many there are. */
static int hidden(struct scan *s)
{
	static const char *const ids[] = { "hidden-unicode/tag-characters",
					   "hidden-unicode/bidi-control",
					   "hidden-unicode/invisible", "hidden-unicode/control" };
	size_t first[4], count[4] = { 0 };
	struct hidden_scan h;
	struct hidden c;

	hidden_scan_init(&h, s->text, s->len);
	while (hidden_scan_next(&h, &c)) {
		const char *id = hidden_rule(&c, s);

		for (size_t i = 0; id && i < 4; i++)
			if (strcmp(id, ids[i]) == 0 && count[i]++ == 0)
				first[i] = c.at;
	}
	for (size_t i = 0; i < 4; i++) {
		char note[64];

		if (!count[i])
			continue;
		snprintf(note, sizeof(note), "%zu in the file", count[i]);
		if (index_lines(s) < 0 || add_code(s, ids[i], first[i], 1, note, 0) < 0)
			return -1;
	}
	return 0;
}

/* The redactor's weaker rules: a finding to look at, not a credential for sure. */
static int weak_secret(const char *rule)
{
	return strcmp(rule, "password_assignment") == 0 || strcmp(rule, "high_entropy") == 0 ||
	       strcmp(rule, "url_password") == 0 || strcmp(rule, "connection_string") == 0 ||
	       strcmp(rule, "jwt") == 0;
}

static int secrets(struct scan *s)
{
	struct tg_redact_out r;
	struct tg_error err;
	int rc = 0;

	if (tg_redact(s->text, s->len, &r, &err) < 0) {
		tg_redact_out_release(&r);
		return -1;
	}
	/* PER_RULE_MAX of each id: twenty weak ones must not hide a strong one */
	for (size_t i = 0, n[2] = { 0, 0 }; i < r.nfindings && rc == 0; i++) {
		int weak = weak_secret(r.findings[i].rule);

		if (n[weak]++ < PER_RULE_MAX)
			rc = add_code(s, weak ? "secrets/possible" : "secrets/hard-coded",
				      (size_t)r.findings[i].offset, (size_t)r.findings[i].length,
				      r.findings[i].rule, 1);
	}
	tg_redact_out_release(&r);
	return rc;
}

static int deps_found(void *ctx, const char *rule, size_t at, size_t len, const char *note)
{
	return add_code(ctx, rule, at, len, note, 0);
}

/* text[0, len), of class cls, as path: each rule of its class, then the
 * scanner's own. */
static int scan_text(struct scan *s, const char *path, const char *text, size_t len,
		     unsigned cls)
{
	int rc = 0;

	s->path = path;
	s->text = text;
	s->len = len;
	if (lower_case(s) < 0)
		return -1;
	words_scan(&s->rules->words, s->lower, s->lower_len, s->found);
	for (size_t r = 0; r < s->rules->n && rc == 0 && !over_budget(s); r++) {
		const struct skill_rule *rule = &s->rules->r[r];

		if (rule->re && !rule->off && (rule->files & cls) && has_words(s, rule))
			rc = run_rule(s, rule, cls);
	}
	if (rc == 0 && s->over) {
		char note[96];

		snprintf(note, sizeof(note), "stopped after %d s at this file; what follows is unread",
			 TG_SKILL_SCAN_BUDGET_S);
		if (index_lines(s) < 0)
			rc = -1;
		else
			rc = add_code(s, "scanner/incomplete", 0, 0, note, 0);
	}
	if (rc == 0)
		rc = hidden(s);
	if (rc == 0)
		rc = secrets(s);
	if (rc == 0)
		rc = deps_scan(path, s->text, s->len, cls == FILE_CODE, deps_found, s);
	free(s->lines);
	s->lines = NULL;
	free(s->fence);
	s->fence = NULL;
	free(s->lower);
	s->lower = NULL;
	return rc;
}

static int scan_file(struct scan *s, size_t i)
{
	const struct tg_skill_file *f = &s->skill->files[i];
	unsigned cls = classify(f);

	if (!cls)
		return 0;
	s->out->files_scanned++;
	return scan_text(s, f->path, f->data, (size_t)f->size, cls);
}

/* The description as the frontmatter's YAML decodes it, which is what
 * serve lists to the model, when SKILL.md's bytes do not hold it as it is:
 * a double-quoted scalar's escapes ("\U000E0049", "\u202E", "\e",
 * "\x49gnore") make characters and words no rule sees in the file. */
static int scan_description(struct scan *s)
{
	const struct tg_skill *k = s->skill;
	const char *d = k->meta.description;

	if (!d || !k->skill_md || memmem(k->skill_md, k->skill_md_len, d, strlen(d)))
		return 0;
	return scan_text(s, DESCRIPTION, d, strlen(d), FILE_TEXT);
}

/* By file (the skill's order), line, column. */
static int by_place(const void *a, const void *b)
{
	const struct tg_skill_finding *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->column != y->column)
		return x->column < y->column ? -1 : 1;
	return strcmp(x->rule, y->rule);
}

int tg_skill_scan(const struct tg_skill *skill, const struct tg_skill_rules *rules,
		  struct tg_skill_report *out, struct tg_error *err)
{
	struct scan s = { .skill = skill, .rules = rules, .out = out, .err = err };
	PCRE2_SIZE at;
	int rc = -1, code;

	memset(out, 0, sizeof(*out));
	if (tg_pcre2_load("skill scan", err) < 0)
		return -1;
	s.caution = pcre2_compile((PCRE2_SPTR)caution_pattern, PCRE2_ZERO_TERMINATED,
				  PCRE2_CASELESS | PCRE2_UTF, &code, &at, NULL);
	s.md = pcre2_match_data_create(1, NULL);
	s.caution_md = pcre2_match_data_create(1, NULL);
	s.mctx = pcre2_match_context_create(NULL);
	if (!s.caution || !s.md || !s.caution_md || !s.mctx) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	pcre2_set_match_limit(s.mctx, MATCH_LIMIT);
	pcre2_set_depth_limit(s.mctx, DEPTH_LIMIT);
	clock_gettime(CLOCK_MONOTONIC, &s.start);
	for (size_t i = 0; i < skill->n_files && !s.over; i++)
		if (scan_file(&s, i) < 0) {
			tg_error_set(err, TG_ERR_NOMEM, "out of memory scanning %s/%s", skill->dir,
				     skill->files[i].path);
			goto out;
		}
	/* past the budget, scanner/incomplete says so already */
	if (!s.over && scan_description(&s) < 0) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory scanning %s/" DESCRIPTION,
			     skill->dir);
		goto out;
	}
	if (out->n)
		qsort(out->findings, out->n, sizeof(*out->findings), by_place);
	rc = 0;
out:
	free(s.lines);
	free(s.fence);
	free(s.lower);
	pcre2_code_free(s.caution);
	pcre2_match_data_free(s.md);
	pcre2_match_data_free(s.caution_md);
	pcre2_match_context_free(s.mctx);
	return rc;
}

void tg_skill_report_release(struct tg_skill_report *report)
{
	if (!report)
		return;
	free(report->findings);
	memset(report, 0, sizeof(*report));
}
