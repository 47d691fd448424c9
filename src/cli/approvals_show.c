/*
 * What `toolgate approvals list` and `show` print for a person (docs/CLI.md,
 * "Approvals for a person"): a table of tickets, newest first, with local
 * times, age and time left; and one ticket with its arguments folded,
 * their SHA-256, the anomaly findings and the dry run's preview rendered
 * by its shape: an SQL statement's changed rows as a table, a file's
 * change as a unified diff, a plan as numbered steps, an upstream
 * definition's change as its report, anything else as indented JSON.
 * --json prints the tickets as the admin API does instead (approvals.c).
 *
 * Must never: print a string others chose (arguments, previews, names,
 * reasons, descriptions) other than in its display form (util/hidden.h:
 * bidi controls, escapes and other hidden characters written \u202E, a
 * backslash doubled), nor a colour's escape sequence to what is not a
 * terminal; decide anything.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/approvals_int.h"
#include "cli/cli.h"
#include "toolgate/catalog.h"
#include "toolgate/contract.h"
#include "toolgate/store.h"
#include "util/hidden.h"
#include "util/json_wide.h"
#include "util/utf8.h"

#define FOLD_STRING 480    /* bytes of a string shown before it is folded */
#define FOLD_KEEP 320      /* of which this much is kept */
#define FOLD_ITEMS 64      /* items of an array or members of an object */
#define FOLD_LINES 400     /* lines of a diff or a text */
#define CELL_MAX 48        /* characters of a table's cell */

/* SGR sequences, printed only with colour */
#define BOLD "1"
#define DIM "2"
#define RED "31"
#define GREEN "32"
#define YELLOW "33"
#define CYAN "36"

int approvals_color(FILE *f)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	return isatty(fileno(f)) && !(nc && *nc) && !(term && strcmp(term, "dumb") == 0);
}

static void sgr(FILE *f, const struct approvals_view *v, const char *code)
{
	if (v->color)
		fprintf(f, "\033[%sm", code);
}

static void sgr_end(FILE *f, const struct approvals_view *v)
{
	if (v->color)
		fputs("\033[0m", f);
}

/* s[0, n) as one cell or one line: its display form, with a newline and
 * a tab, which the display form keeps, written \n and \t (malloc'd; NULL
 * out of memory). */
static char *one_line(const char *s, size_t n)
{
	char *d = hidden_display_new(s, n, NULL), *out, *o;
	const char *p;

	if (!d)
		return NULL;
	out = malloc(strlen(d) * 2 + 1);
	for (p = d, o = out; out && *p; p++) {
		if (*p == '\n' || *p == '\t') {
			*o++ = '\\';
			*o++ = *p == '\n' ? 'n' : 't';
		} else {
			*o++ = *p;
		}
	}
	if (out)
		*o = '\0';
	free(d);
	return out;
}

/* Characters of UTF-8 text s, as a terminal's columns (near enough:
 * wide characters count one). */
static size_t columns(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* The bytes of the unit at s of a display form: an escape (\\, \n, \t,
 * \xNN, \uXXXX, \u{XXXXX}) whole, else one UTF-8 character. */
static size_t unit(const char *s)
{
	size_t n;

	if (*s != '\\' || !s[1])
		return (n = utf8_char((const unsigned char *)s, strlen(s), NULL)) ? n : 1;
	if (s[1] == 'x')
		return strnlen(s, 4);
	if (s[1] == 'u' && s[2] == '{')
		return (size_t)(strchrnul(s, '}') - s) + (strchr(s, '}') != NULL);
	if (s[1] == 'u')
		return strnlen(s, 6);
	return 2;
}

/* Display form s cut to at most max - 1 columns, "…" ending one that was
 * cut (in place, never inside an escape or a character). At most max - 2
 * are kept of one past max: the 3 columns or more left hold the 3 bytes
 * of "…" and the NUL. */
static void cut_cell(char *s, size_t max)
{
	size_t at = 0, used = 0, u;

	if (columns(s) <= max)
		return;
	while (s[at]) {
		u = unit(s + at);
		if (used + (s[at] == '\\' ? u : 1) > max - 2)
			break;
		used += s[at] == '\\' ? u : 1;
		at += u;
	}
	memcpy(s + at, "\xe2\x80\xa6", 4);
}

static void pad(FILE *f, size_t n)
{
	while (n--)
		fputc(' ', f);
}

/* Text others chose, in its display form, on lines of its own, each
 * indented by ind; at most FOLD_LINES of them (unless full). */
static void put_lines(FILE *f, const struct approvals_view *v, const char *text, int ind)
{
	const char *p = text, *nl, *q;
	size_t lines = 0, more;
	char *line;

	while (*p) {
		if (!v->full && lines++ == FOLD_LINES) {
			for (more = 1, q = p; (q = strchr(q, '\n')) && q[1]; q++)
				more++;
			pad(f, (size_t)ind);
			fprintf(f, "[... %zu more line%s: --full shows them]\n", more,
				more == 1 ? "" : "s");
			return;
		}
		nl = strchr(p, '\n');
		line = one_line(p, nl ? (size_t)(nl - p) : strlen(p));
		pad(f, (size_t)ind);
		fputs(line ? line : "(out of memory: not shown)", f);
		fputc('\n', f);
		free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* ---- times ------------------------------------------------------------------ */

/* A span of s seconds for a person: 45s, 3m, 2h05m, 3d4h. */
static void span(int64_t s, char *out, size_t len)
{
	if (s < 0)
		s = 0;
	if (s < 60)
		snprintf(out, len, "%llds", (long long)s);
	else if (s < 3600)
		snprintf(out, len, "%lldm", (long long)(s / 60));
	else if (s < 86400)
		snprintf(out, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s % 3600 / 60));
	else
		snprintf(out, len, "%lldd%lldh", (long long)(s / 86400), (long long)(s % 86400 / 3600));
}

/* t in local time: the zone's name (ZONE), a table's minute (SHORT), or
 * a ticket's second with the zone (LONG). */
enum when { ZONE, SHORT, LONG };

static void local_time(int64_t t, enum when how, char *out, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;
	size_t n = 0;

	if (localtime_r(&tt, &tm))
		n = how == ZONE ? strftime(out, len, "%Z", &tm)
		    : how == SHORT ? strftime(out, len, "%Y-%m-%d %H:%M", &tm)
				   : strftime(out, len, "%Y-%m-%d %H:%M:%S %Z", &tm);
	if (!n)
		snprintf(out, len, "%lld", (long long)t);
}

/* What is left of t's time to be decided: "57m left", "expired 3m ago",
 * or "-" once decided. */
static void time_left(const struct tg_ticket *t, int64_t now, char *out, size_t len)
{
	char s[32];

	if (t->state != TG_TICKET_PENDING && t->state != TG_TICKET_EXPIRED) {
		snprintf(out, len, "-");
		return;
	}
	span(t->expires - now, s, sizeof(s));
	if (t->expires > now)
		snprintf(out, len, "%s left", s);
	else
		snprintf(out, len, "expired");
}

/* ---- the table -------------------------------------------------------------- */

#define NCOLS 8

static size_t findings_count(const char *findings)
{
	json_t *f = findings ? json_loads(findings, 0, NULL) : NULL;
	size_t n = json_is_array(f) ? json_array_size(f) : findings ? 1 : 0;

	json_decref(f);
	return n;
}

void approvals_table(FILE *f, const struct approvals_view *v, struct tg_ticket *list, size_t n,
		     size_t idlen)
{
	static const char *head[NCOLS] = { "ID", "STATE", "TOOL", "REQUESTED BY", "CREATED",
					   "AGE", "LEFT", "FLAGS" };
	char ***rows = calloc(n ? n : 1, sizeof(*rows)), buf[80], zone[16], age[32];
	size_t w[NCOLS], i, c, k;

	if (!rows) {
		fputs("(out of memory: not shown)\n", f);
		return;
	}
	local_time(v->now, ZONE, zone, sizeof(zone));
	for (c = 0; c < NCOLS; c++)
		w[c] = strlen(head[c]);
	w[4] = strlen("CREATED ()") + strlen(zone);
	for (i = 0; i < n; i++) {
		const struct tg_ticket *t = &list[i];

		rows[i] = calloc(NCOLS, sizeof(char *));
		if (!rows[i])
			break;
		snprintf(buf, sizeof(buf), "%.*s", (int)idlen, t->id);
		rows[i][0] = strdup(buf);
		rows[i][1] = strdup(tg_ticket_state_name(t->state));
		rows[i][2] = one_line(t->tool, strlen(t->tool));
		rows[i][3] = one_line(t->principal, strlen(t->principal));
		local_time(t->created, SHORT, buf, sizeof(buf));
		rows[i][4] = strdup(buf);
		span(v->now - t->created, age, sizeof(age));
		snprintf(buf, sizeof(buf), "%s ago", age);
		rows[i][5] = strdup(buf);
		time_left(t, v->now, buf, sizeof(buf));
		rows[i][6] = strdup(buf);
		k = findings_count(t->findings);
		if (k)
			snprintf(buf, sizeof(buf), "anomalous (%zu)", k);
		else
			buf[0] = '\0';
		rows[i][7] = strdup(buf);
		for (c = 0; c < NCOLS; c++) {
			if (!rows[i][c])
				rows[i][c] = strdup("?");
			if (rows[i][c]) {
				cut_cell(rows[i][c], CELL_MAX);
				if (columns(rows[i][c]) > w[c])
					w[c] = columns(rows[i][c]);
			}
		}
	}
	n = i;
	if (n) {
		sgr(f, v, BOLD);
		for (c = 0; c < NCOLS; c++) {
			if (c == 4)
				snprintf(buf, sizeof(buf), "CREATED (%s)", zone);
			fputs(c == 4 ? buf : head[c], f);
			if (c + 1 < NCOLS)
				pad(f, w[c] - columns(c == 4 ? buf : head[c]) + 2);
		}
		sgr_end(f, v);
		fputc('\n', f);
	}
	for (i = 0; i < n; i++) {
		for (c = 0; c < NCOLS; c++) {
			const char *s = rows[i][c] ? rows[i][c] : "?";
			int hue = c == 7 && *s ? 1 : c == 1 && list[i].state == TG_TICKET_PENDING ? 2 : 0;

			if (hue)
				sgr(f, v, hue == 1 ? RED : YELLOW);
			fputs(s, f);
			if (hue)
				sgr_end(f, v);
			if (c + 1 < NCOLS && rows[i][c + 1] && *rows[i][c + 1])
				pad(f, w[c] - columns(s) + 2);
			free(rows[i][c]);
		}
		fputc('\n', f);
		free(rows[i]);
	}
	free(rows);
	fprintf(f, "%zu ticket%s\n", n, n == 1 ? "" : "s");
}

/* ---- values ------------------------------------------------------------------ */

/* A JSON scalar (or a string's first n bytes) as JSON text, hidden
 * characters as JSON escapes. */
static void put_scalar(FILE *f, const json_t *j, size_t n)
{
	json_t *cut = json_is_string(j) ? json_stringn(json_string_value(j), n) : NULL;
	char *text = json_dumps(cut ? cut : j, JSON_ENCODE_ANY);

	cli_put_json(f, text ? text : "\"(out of memory: not shown)\"");
	free(text);
	json_decref(cut);
}

/* j as indented JSON at depth ind, long strings and arrays folded unless
 * the view is full: what a person reads, never what is hashed (the
 * ticket's args_sha256 is of the arguments themselves). */
static void put_value(FILE *f, const struct approvals_view *v, const json_t *j, int ind)
{
	const char *key;
	json_t *item, *k;
	size_t i = 0, n, len;

	if (json_is_string(j) && (len = json_string_length(j)) > FOLD_STRING && !v->full) {
		put_scalar(f, j, utf8_cut(json_string_value(j), len, FOLD_KEEP));
		sgr(f, v, DIM);
		fprintf(f, " [... folded: %zu bytes in all; --full shows them]", len);
		sgr_end(f, v);
		return;
	}
	if (!json_is_object(j) && !json_is_array(j)) {
		put_scalar(f, j, json_is_string(j) ? json_string_length(j) : 0);
		return;
	}
	n = json_is_array(j) ? json_array_size(j) : json_object_size(j);
	if (!n) {
		fputs(json_is_array(j) ? "[]" : "{}", f);
		return;
	}
	fputs(json_is_array(j) ? "[\n" : "{\n", f);
	if (json_is_array(j)) {
		json_array_foreach(j, i, item) {
			if (i == FOLD_ITEMS && !v->full)
				break;
			pad(f, (size_t)ind + 2);
			put_value(f, v, item, ind + 2);
			fputs(i + 1 < n ? ",\n" : "\n", f);
		}
	} else {
		json_object_foreach((json_t *)j, key, item) {
			if (i == FOLD_ITEMS && !v->full)
				break;
			pad(f, (size_t)ind + 2);
			k = json_string(key);
			put_scalar(f, k, strlen(key));
			json_decref(k);
			fputs(": ", f);
			put_value(f, v, item, ind + 2);
			fputs(++i < n ? ",\n" : "\n", f);
		}
	}
	if (i < n && !v->full) {
		pad(f, (size_t)ind + 2);
		sgr(f, v, DIM);
		fprintf(f, "[... folded: %zu more; --full shows them]", n - i);
		sgr_end(f, v);
		fputc('\n', f);
	}
	pad(f, (size_t)ind);
	fputs(json_is_array(j) ? "]" : "}", f);
}

/* A value in a table's cell: a string as its display form, null as NULL,
 * anything else as JSON. malloc'd. */
static char *cell_of(const json_t *j)
{
	char *text, *out;

	if (json_is_string(j))
		out = one_line(json_string_value(j), json_string_length(j));
	else if (json_is_null(j) || !j)
		out = strdup("NULL");
	else {
		text = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);
		out = text ? one_line(text, strlen(text)) : NULL;
		free(text);
	}
	if (out)
		cut_cell(out, CELL_MAX);
	return out;
}

/* A string member of o in its display form (NULL: o has none). */
static char *member(const json_t *o, const char *name)
{
	const json_t *s = json_object_get(o, name);

	return json_is_string(s) ? one_line(json_string_value(s), json_string_length(s)) : NULL;
}

/* ---- previews ---------------------------------------------------------------- */

static void render(FILE *f, const struct approvals_view *v, const json_t *r, int ind);

/* Rows of one table: header then each sample's rows, "-" before and
 * "+" after, as the columns ask. */
static void sql_table(FILE *f, const struct approvals_view *v, const json_t *cols,
		      const json_t *sample, size_t from, size_t to, int ind)
{
	size_t nc = json_array_size(cols), i, c, r, w[64], ncells = 0;
	char **cells = calloc((to - from) * 2 * (nc + 1) + nc + 1, sizeof(char *));
	const char *sides[2] = { "before", "after" };

	if (!cells || nc > 63)
		goto out;
	/* the header, then per row its sign and values */
	cells[ncells++] = strdup("");
	for (c = 0; c < nc; c++)
		cells[ncells++] = cell_of(json_array_get(cols, c));
	for (i = from; i < to; i++)
		for (r = 0; r < 2; r++) {
			const json_t *row = json_object_get(json_array_get(sample, i), sides[r]);

			if (!json_is_array(row))
				continue;
			cells[ncells++] = strdup(r ? "+" : "-");
			for (c = 0; c < nc; c++)
				cells[ncells++] = cell_of(json_array_get(row, c));
		}
	for (c = 0; c <= nc; c++)
		w[c] = 0;
	for (i = 0; i < ncells; i++)
		if (cells[i] && columns(cells[i]) > w[i % (nc + 1)])
			w[i % (nc + 1)] = columns(cells[i]);
	for (i = 0; i < ncells; i++) {
		c = i % (nc + 1);
		if (c == 0)
			pad(f, (size_t)ind);
		if (c == 0 && i > 0)
			sgr(f, v, cells[i] && cells[i][0] == '+' ? GREEN : RED);
		else if (i == 0)
			sgr(f, v, BOLD);
		fputs(cells[i] ? cells[i] : "?", f);
		if (c == nc) {
			sgr_end(f, v);
			fputc('\n', f);
		} else {
			pad(f, w[c] - (cells[i] ? columns(cells[i]) : 1) + 2);
		}
	}
out:
	for (i = 0; cells && i < ncells; i++)
		free(cells[i]);
	free(cells);
}

/* sql.execute's dry run: the statement, how many rows, and the sample of
 * rows before and after, one table for each run of one table and op. */
static void render_sql(FILE *f, const struct approvals_view *v, const json_t *r, int ind)
{
	const json_t *sample = json_object_get(r, "sample"), *a, *b;
	char *stmt = member(r, "statement");
	json_int_t rows = json_integer_value(json_object_get(r, "rows_changed"));
	size_t i, j, n = json_array_size(sample);

	if (stmt) {
		pad(f, (size_t)ind);
		fprintf(f, "statement: %s\n", stmt);
	}
	free(stmt);
	pad(f, (size_t)ind);
	fprintf(f, "%lld row%s would change", (long long)rows, rows == 1 ? "" : "s");
	if (json_array_size(json_object_get(r, "tables"))) {
		fputs(" in ", f);
		json_array_foreach(json_object_get(r, "tables"), i, a) {
			char *t = cell_of(a);

			fprintf(f, "%s%s", i ? ", " : "", t ? t : "?");
			free(t);
		}
	}
	fprintf(f, "%s\n", (size_t)rows > n && n ? "; a sample of them:" : n ? ":" : "");
	for (i = 0; i < n; i = j) {
		char *table, *op;

		a = json_array_get(sample, i);
		for (j = i + 1; j < n; j++) {
			b = json_array_get(sample, j);
			if (!json_equal(json_object_get(a, "table"), json_object_get(b, "table")) ||
			    !json_equal(json_object_get(a, "op"), json_object_get(b, "op")) ||
			    !json_equal(json_object_get(a, "columns"), json_object_get(b, "columns")))
				break;
		}
		table = member(a, "table");
		op = member(a, "op");
		pad(f, (size_t)ind);
		fprintf(f, "%s (%s)\n", table ? table : "?", op ? op : "?");
		free(table);
		free(op);
		sql_table(f, v, json_object_get(a, "columns"), sample, i, j, ind + 2);
	}
	if ((size_t)rows > n && n) {
		pad(f, (size_t)ind);
		fprintf(f, "[... %lld more rows not in the sample]\n", (long long)rows - (long long)n);
	}
}

/* A unified diff, its lines in their display form, coloured by sign. */
static void put_diff(FILE *f, const struct approvals_view *v, const char *diff, int ind)
{
	const char *p = diff, *nl;
	size_t lines = 0;
	char *line;

	while (*p) {
		if (!v->full && lines++ == FOLD_LINES) {
			pad(f, (size_t)ind);
			fputs("[... the rest of the diff folded: --full shows it]\n", f);
			return;
		}
		nl = strchr(p, '\n');
		line = one_line(p, nl ? (size_t)(nl - p) : strlen(p));
		pad(f, (size_t)ind);
		if (line && (line[0] == '+' || line[0] == '-' || line[0] == '@'))
			sgr(f, v, line[0] == '+' ? GREEN : line[0] == '-' ? RED : CYAN);
		fputs(line ? line : "(out of memory: not shown)", f);
		sgr_end(f, v);
		fputc('\n', f);
		free(line);
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* fs.write's and fs.delete's dry run: the file, its sizes, the diff. */
static void render_file(FILE *f, const struct approvals_view *v, const json_t *r, int ind)
{
	char *path = member(r, "path"), *op = member(r, "op");
	const json_t *before = json_object_get(r, "bytes_before");
	const json_t *after = json_object_get(r, "bytes_after");

	pad(f, (size_t)ind);
	fprintf(f, "%s %s", op ? op : "change", path ? path : "?");
	if (json_is_integer(before) && json_is_integer(after))
		fprintf(f, " (%lld -> %lld bytes%s)", (long long)json_integer_value(before),
			(long long)json_integer_value(after),
			json_is_false(json_object_get(r, "existed")) ? ", a new file" : "");
	fputc('\n', f);
	free(path);
	free(op);
	put_diff(f, v, json_string_value(json_object_get(r, "diff")), ind);
}

/* An overlay dry run's changes (docs/PIPELINE.md, "On an overlay"). */
static void render_changes(FILE *f, const struct approvals_view *v, const json_t *pv, int ind)
{
	const json_t *ch = json_object_get(pv, "changes"), *c;
	size_t i;

	pad(f, (size_t)ind);
	fprintf(f, "on an overlay, nothing written: %zu path%s would change\n",
		json_array_size(ch), json_array_size(ch) == 1 ? "" : "s");
	json_array_foreach(ch, i, c) {
		char *change = member(c, "change"), *kind = member(c, "kind");
		char *path = member(c, "path"), *target = member(c, "target");
		const json_t *b = json_object_get(c, "before_bytes"), *a = json_object_get(c, "after_bytes");

		pad(f, (size_t)ind + 2);
		fprintf(f, "%s %s %s", change ? change : "?", kind ? kind : "?", path ? path : "?");
		if (target)
			fprintf(f, " -> %s", target);
		if (json_is_integer(b) || json_is_integer(a))
			fprintf(f, " (%lld -> %lld bytes)", (long long)json_integer_value(b),
				(long long)json_integer_value(a));
		if (json_is_true(json_object_get(c, "diff_omitted")))
			fputs(" [diff omitted]", f);
		fputc('\n', f);
		if (json_is_string(json_object_get(c, "diff")))
			put_diff(f, v, json_string_value(json_object_get(c, "diff")), ind + 4);
		free(change);
		free(kind);
		free(path);
		free(target);
	}
	if (json_is_true(json_object_get(pv, "changes_truncated"))) {
		pad(f, (size_t)ind + 2);
		fputs("[... more changes: the list stops at 1,000]\n", f);
	}
}

/* The findings of a ticket or of a held step: rule, the spot, why. */
static void put_findings(FILE *f, const struct approvals_view *v, const json_t *list, int ind)
{
	const json_t *x;
	size_t i;

	json_array_foreach(list, i, x) {
		char *rule = member(x, "rule"), *at = member(x, "at"), *why = member(x, "why");

		pad(f, (size_t)ind);
		sgr(f, v, RED);
		fputs(rule ? rule : "?", f);
		sgr_end(f, v);
		fprintf(f, " at %s: %s\n", at && *at ? at : "(the arguments)", why ? why : "");
		free(rule);
		free(at);
		free(why);
	}
}

/* plan.run's dry run: each step, numbered, with its own preview. */
static void render_plan(FILE *f, const struct approvals_view *v, const json_t *r, int ind)
{
	const json_t *step;
	size_t i;

	json_array_foreach(json_object_get(r, "steps"), i, step) {
		char *tool = member(step, "tool"), *ver = member(step, "version");

		pad(f, (size_t)ind);
		sgr(f, v, BOLD);
		fprintf(f, "%zu. %s@%s", i + 1, tool ? tool : "?", ver ? ver : "?");
		sgr_end(f, v);
		free(tool);
		free(ver);
		if (json_is_true(json_object_get(step, "held"))) {
			fputs(": held for its anomalies, not run in the preview\n", f);
			put_findings(f, v, json_object_get(step, "anomalies"), ind + 3);
			continue;
		}
		fputc('\n', f);
		render(f, v, json_object_get(step, "preview"), ind + 3);
	}
}

/* Content blocks: text as lines, anything else as JSON. */
static void render_content(FILE *f, const struct approvals_view *v, const json_t *c, int ind)
{
	const json_t *b;
	size_t i;

	json_array_foreach(c, i, b) {
		const json_t *text = json_object_get(b, "text");

		if (json_is_string(text)) {
			put_lines(f, v, json_string_value(text), ind);
			continue;
		}
		pad(f, (size_t)ind);
		put_value(f, v, b, ind);
		fputc('\n', f);
	}
}

/* A tool's result (its structured content, or its content blocks) by its
 * shape; what has none known as indented JSON. */
static void render(FILE *f, const struct approvals_view *v, const json_t *r, int ind)
{
	if (json_is_array(json_object_get(r, "steps")))
		render_plan(f, v, r, ind);
	else if (json_is_array(json_object_get(r, "sample")))
		render_sql(f, v, r, ind);
	else if (json_is_string(json_object_get(r, "diff")))
		render_file(f, v, r, ind);
	else if (json_is_array(r) && json_array_size(r) &&
		 json_is_object(json_array_get(r, 0)) && json_object_get(json_array_get(r, 0), "type"))
		render_content(f, v, r, ind);
	else if (r) {
		pad(f, (size_t)ind);
		put_value(f, v, r, ind);
		fputc('\n', f);
	}
}

/* The ticket's preview: a dry run's answer {content, isError, structured?,
 * changes?}, an upstream definition's change, or text. */
static void render_preview(FILE *f, const struct approvals_view *v, const char *preview)
{
	json_t *pv = json_loads(preview, JSON_ALLOW_NUL, NULL), *sc;

	if (!json_is_object(pv) || !json_object_get(pv, "content")) {
		if (pv)
			render(f, v, pv, 2);
		else
			put_lines(f, v, preview, 2);
		json_decref(pv);
		return;
	}
	sc = json_object_get(pv, "structured");
	if (json_is_array(json_object_get(pv, "changes"))) {
		/* the gate's report of what the tool changed, after the
		 * tool's own words when it said anything structured */
		if (sc)
			render(f, v, sc, 2);
		render_changes(f, v, pv, 2);
	} else if (json_object_get(sc, "definition") && json_object_get(sc, "change")) {
		/* an upstream tool's definition changed: the report, the
		 * scanner's findings on the new one */
		render_content(f, v, json_object_get(pv, "content"), 2);
		if (json_array_size(json_object_get(sc, "findings"))) {
			fputs("  the description scanner found:\n", f);
			put_findings(f, v, json_object_get(sc, "findings"), 4);
		}
	} else {
		render(f, v, sc ? sc : json_object_get(pv, "content"), 2);
	}
	json_decref(pv);
}

/* ---- one ticket -------------------------------------------------------------- */

/* "  label     " then the rest of the line. */
static void label(FILE *f, const struct approvals_view *v, const char *name)
{
	sgr(f, v, DIM);
	fprintf(f, "  %-10s", name);
	sgr_end(f, v);
	fputc(' ', f);
}

static void put_text_line(FILE *f, const char *s)
{
	char *line = one_line(s, strlen(s));

	fputs(line ? line : "(out of memory: not shown)", f);
	free(line);
}

static const char *risk_name(enum tg_risk r)
{
	return r == TG_RISK_LOW ? "low" : r == TG_RISK_MEDIUM ? "medium" : r == TG_RISK_HIGH ? "high"
	       : r == TG_RISK_CRITICAL ? "critical" : "not stated";
}

/* What the catalogue says of the ticket's tool: owner, description, risk
 * and how it is undone. */
static void put_contract(FILE *f, const struct approvals_view *v, const struct tg_ticket *t)
{
	const struct tg_contract *k = NULL;
	struct tg_error err;

	if (tg_catalog_resolve(v->catalog, t->tool, NULL, &k, &err) < 0) {
		label(f, v, "catalogue");
		put_text_line(f, err.msg);
		fputc('\n', f);
		return;
	}
	if (k->owner_team || k->owner_contact) {
		label(f, v, "owner");
		put_text_line(f, k->owner_team ? k->owner_team : "");
		if (k->owner_contact) {
			fputs(k->owner_team ? " (" : "", f);
			put_text_line(f, k->owner_contact);
			fputs(k->owner_team ? ")" : "", f);
		}
		fputc('\n', f);
	}
	label(f, v, "risk");
	fprintf(f, "%s; ", risk_name(k->risk));
	if (k->compensation_tool) {
		fputs("undone by ", f);
		put_text_line(f, k->compensation_tool);
	} else if (k->irreversible) {
		fputs("irreversible: ", f);
		put_text_line(f, k->irreversible);
	} else {
		fputs("no compensation", f);
	}
	fputc('\n', f);
	if (k->description) {
		label(f, v, "about");
		fputc('\n', f);
		put_lines(f, v, k->description, 4);
	}
}

/* Who asked, the tool, the times, the decision. */
static void put_head(FILE *f, const struct approvals_view *v, const struct tg_ticket *t)
{
	char when[64], s[32];

	sgr(f, v, BOLD);
	fprintf(f, "Ticket %s", t->id);
	sgr_end(f, v);
	fputs("  ", f);
	sgr(f, v, t->state == TG_TICKET_PENDING ? YELLOW : BOLD);
	fputs(tg_ticket_state_name(t->state), f);
	sgr_end(f, v);
	fputc('\n', f);
	label(f, v, "tool");
	put_text_line(f, t->tool);
	fputc('\n', f);
	label(f, v, "asked by");
	put_text_line(f, t->principal);
	fputc('\n', f);
	if (v->catalog)
		put_contract(f, v, t);
	if (t->covers) {
		label(f, v, "covers");
		put_text_line(f, t->covers);
		fputs(" (its approver needs an approve scope over each)\n", f);
	}
	label(f, v, "created");
	local_time(t->created, LONG, when, sizeof(when));
	span(v->now - t->created, s, sizeof(s));
	fprintf(f, "%s (%s ago)\n", when, s);
	if (t->state == TG_TICKET_PENDING || t->state == TG_TICKET_EXPIRED) {
		label(f, v, t->state == TG_TICKET_PENDING ? "expires" : "expired");
		local_time(t->expires, LONG, when, sizeof(when));
		time_left(t, v->now, s, sizeof(s));
		fprintf(f, "%s (%s)\n", when, t->state == TG_TICKET_PENDING ? s : "undecided: "
			"nothing ran");
	}
	if (t->decided) {
		label(f, v, "decided");
		local_time(t->decided, LONG, when, sizeof(when));
		fprintf(f, "%s", when);
		if (t->approver[0]) {
			fputs(" by ", f);
			put_text_line(f, t->approver);
		}
		fputc('\n', f);
	}
	if (t->reason) {
		label(f, v, "reason");
		put_text_line(f, t->reason);
		fputc('\n', f);
	}
}

void approvals_ticket(FILE *f, const struct approvals_view *v, const struct tg_ticket *t)
{
	/* a number jansson would round: shown as stored, every digit */
	json_t *args = t->arguments && !json_wide_has_long(t->arguments, strlen(t->arguments))
			       ? json_loads(t->arguments, JSON_ALLOW_NUL, NULL)
			       : NULL;
	json_t *findings = t->findings ? json_loads(t->findings, 0, NULL) : NULL;

	put_head(f, v, t);
	fputc('\n', f);
	sgr(f, v, BOLD);
	fputs("Arguments", f);
	sgr_end(f, v);
	fprintf(f, " (SHA-256 %s: what runs once approved)\n  ", t->args_sha256);
	if (args)
		put_value(f, v, args, 2);
	else if (t->arguments)
		cli_put_json(f, t->arguments); /* what jansson cannot hold: as stored */
	else
		fputs("(no longer kept: the ticket ended and its arguments were collected)", f);
	fputc('\n', f);
	if (t->findings) {
		fputc('\n', f);
		sgr(f, v, BOLD);
		fputs("Anomalies", f);
		sgr_end(f, v);
		fputs(" (why the arguments were held: docs/ANOMALIES.md)\n", f);
		if (json_is_array(findings))
			put_findings(f, v, findings, 2);
		else
			put_lines(f, v, t->findings, 2);
	}
	fputc('\n', f);
	sgr(f, v, BOLD);
	fputs("Preview", f);
	sgr_end(f, v);
	if (!t->preview) {
		fputs(": none (the tool has no dry run, or the ticket ended and it was collected)\n",
		      f);
	} else {
		fputs(" (the dry run: nothing has changed)\n", f);
		render_preview(f, v, t->preview);
	}
	json_decref(args);
	json_decref(findings);
}
