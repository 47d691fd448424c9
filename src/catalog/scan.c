/*
 * Scanning tool descriptions for text aimed at the model
 * (include/toolgate/scan.h, docs/SCANNING.md).
 *
 * Two passes over each string. The first decodes UTF-8 and flags what a
 * person reviewing the contract would not see: Unicode tag characters
 * (which spell ASCII invisibly), bidi controls (which reorder what is
 * shown), invisible characters, and escape sequences or control
 * characters (which a terminal acts on). The second looks, in a
 * lowercased copy whose words are separated by single spaces, for phrases
 * that address the model instead of describing the tool: "ignore previous
 * instructions", "do not tell the user", prompt markup such as
 * <IMPORTANT>, paths of secrets, directives to other tools. The phrases
 * are patterns of words with bounded gaps, so that "ignore all of the
 * previous instructions" matches what "ignore previous instructions"
 * does, and a description that merely mentions "instructions" does not.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/contract.h"
#include "toolgate/scan.h"
#include "util/utf8.h"

#define TEXT_MAX (1u << 20) /* a string scanned, at most */
#define WORDS_MAX 8192

struct scan {
	const char *text;
	size_t len;
	const char *where;
	struct tg_scan_finding *out;
	size_t max, n;
};

static void excerpt(const char *text, size_t len, size_t at, char *out, size_t cap)
{
	size_t from = at > 24 ? at - 24 : 0, o = 0, i;

	for (i = from; i < len && i < at + 72 && o + 8 < cap; i++) {
		unsigned char ch = (unsigned char)text[i];

		if (ch >= 0x20 && ch < 0x7f) {
			out[o++] = (char)ch;
		} else if (ch == '\n' || ch == '\t' || ch == '\r') {
			out[o++] = ' ';
		} else if (ch < 0x80) {
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
		} else {
			out[o++] = '?'; /* beyond ASCII: the finding says what */
			while (i + 1 < len && ((unsigned char)text[i + 1] & 0xc0) == 0x80)
				i++;
		}
	}
	out[o] = '\0';
}

static void add(struct scan *s, const char *rule, enum tg_scan_kind kind, size_t at,
		const char *shown)
{
	struct tg_scan_finding *f;

	if (s->n++ >= s->max)
		return;
	f = &s->out[s->n - 1];
	memset(f, 0, sizeof(*f));
	f->rule = rule;
	f->kind = kind;
	f->offset = at;
	snprintf(f->where, sizeof(f->where), "%s", s->where);
	if (shown)
		snprintf(f->excerpt, sizeof(f->excerpt), "%s", shown);
	else
		excerpt(s->text, s->len, at, f->excerpt, sizeof(f->excerpt));
}

/* ---- what is not seen ----------------------------------------------------- */

/* The code point at p (n bytes left): its value and length; -1 length for
 * bytes that are not UTF-8. */
static int32_t decode(const unsigned char *p, size_t n, int *len)
{
	uint32_t c;
	size_t k = utf8_char(p, n, &c);

	*len = k ? (int)k : -1;
	return k ? (int32_t)c : -1;
}

static int pictographic(int32_t c)
{
	return (c >= 0x1f000 && c <= 0x1faff) || (c >= 0x2600 && c <= 0x27bf);
}

static void scan_hidden(struct scan *s)
{
	const unsigned char *p = (const unsigned char *)s->text;
	size_t i = 0;
	int32_t prev = 0;

	while (i < s->len) {
		int len;
		int32_t c = decode(p + i, s->len - i, &len);

		if (len < 0) {
			add(s, "invalid_utf8", TG_SCAN_ESCAPE, i, NULL);
			i++;
			continue;
		}
		if (c >= 0xe0000 && c <= 0xe007f) {
			/* tag characters: what they spell, shown */
			char shown[128];
			size_t at = i, o;

			o = (size_t)snprintf(shown, sizeof(shown), "tag characters spelling \"");
			while (i < s->len && (c = decode(p + i, s->len - i, &len)) >= 0xe0000 &&
			       c <= 0xe007f) {
				if (c >= 0xe0020 && c < 0xe007f && o + 3 < sizeof(shown))
					shown[o++] = (char)(c - 0xe0000);
				i += (size_t)len;
			}
			snprintf(shown + o, sizeof(shown) - o, "\"");
			add(s, "tag_characters", TG_SCAN_HIDDEN, at, shown);
			prev = 0;
			continue;
		}
		if ((c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || c == 0x200e ||
		    c == 0x200f || c == 0x061c) {
			char shown[64];

			snprintf(shown, sizeof(shown), "U+%04X (a bidi control)", (unsigned)c);
			add(s, "bidi_control", TG_SCAN_HIDDEN, i, shown);
		} else if (c == 0x200b || c == 0x200c || (c >= 0x2060 && c <= 0x2064) ||
			   c == 0xfeff || c == 0x180e || c == 0x00ad || c == 0x115f || c == 0x1160 ||
			   c == 0x3164 || c == 0xffa0 || (c >= 0xe0100 && c <= 0xe01ef) ||
			   (c == 0x200d && !pictographic(prev))) {
			/* invisible; a joiner inside an emoji sequence is not */
			char shown[64];

			snprintf(shown, sizeof(shown), "U+%04X (invisible)", (unsigned)c);
			add(s, "invisible_character", TG_SCAN_HIDDEN, i, shown);
		} else if (c == 0x1b || c == 0x9b) {
			add(s, "ansi_escape", TG_SCAN_ESCAPE, i, NULL);
		} else if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ||
			   (c >= 0x80 && c <= 0x9f)) {
			add(s, "control_character", TG_SCAN_ESCAPE, i, NULL);
		}
		prev = c;
		i += (size_t)len;
	}
}

/* ---- what is said to the model --------------------------------------------- */

/* A phrase: slots of alternatives ("a|b|c"), each followed by how many
 * words may come before the next slot. */
struct phrase {
	const char *rule;
	const char *slot[6];
	int gap[6];
};

static const struct phrase phrases[] = {
	{ "ignore_instructions",
	  { "ignore|disregard|forget|override|bypass|overrule",
	    "previous|prior|above|earlier|preceding|all|any|other|original|existing|system|safety",
	    "instructions|instruction|rules|directions|directives|prompts|prompt|guidelines|guidance|constraints" },
	  { 3, 2, 0 } },
	{ "hidden_from_user",
	  { "do|dont|never|not|must|should|without",
	    "tell|inform|mention|reveal|show|notify|alert|disclose|telling|informing|mentioning|notifying|alerting",
	    "user|users|human|humans|operator" },
	  { 1, 3, 0 } },
	{ "hidden_from_user",
	  { "user|users|human", "must|should|need|needs", "not|never", "know|see|notice|learn|find" },
	  { 2, 1, 1, 0 } },
	{ "hidden_from_user",
	  { "keep|keeping|kept", "secret|hidden|confidential", "from", "user|users|human" },
	  { 3, 3, 2, 0 } },
	{ "model_directive", { "you", "are", "now" }, { 0, 0, 0 } },
	{ "model_directive", { "from", "now", "on" }, { 0, 0, 0 } },
	{ "model_directive", { "new|updated|real|true|hidden|secret", "instructions|instruction|task|purpose" },
	  { 1, 0 } },
	{ "model_directive", { "developer|god|dan|jailbreak", "mode" }, { 0, 0 } },
	{ "model_directive",
	  { "note|message|attention|instructions|instruction", "to|for", "the", "ai|assistant|model|llm|agent" },
	  { 0, 0, 0, 0 } },
	{ "model_directive",
	  { "ai|assistant|model|llm|agent|claude|chatgpt|gpt", "must|should|shall|will", "always|never|first|secretly|silently|also" },
	  { 0, 0, 0 } },
	{ "exfiltration",
	  { "send|pass|include|forward|upload|post|transmit|exfiltrate|leak|attach|append|copy",
	    "conversation|chat|message|system|previous",
	    "history|log|logs|prompt|messages|context" },
	  { 5, 0, 0 } },
	{ "exfiltration",
	  { "send|pass|include|forward|upload|post|transmit|exfiltrate|leak|attach|append|copy",
	    "results|outputs|output|responses|contents",
	    "of|from", "all|every|any|other", "tool|tools|calls" },
	  { 3, 0, 1, 1, 0 } },
	{ "exfiltration",
	  { "read|cat|open|load", "contents|content|file", "pass|send|include|put|use", "as|in|into", "argument|parameter|param|field|sidenote|note" },
	  { 6, 6, 3, 3, 0 } },
	{ "tool_override",
	  { "instead", "of", "using|calling|the|any", "tool|tools|function" },
	  { 0, 0, 4, 0 } },
	{ "tool_override",
	  { "do|dont|never", "use|call|invoke", "any|other|another", "tool|tools|function|functions" },
	  { 1, 0, 1, 0 } },
	{ "tool_override",
	  { "override|overrides|shadow|shadows|hijack|intercept", "tool|tools|behavior|behaviour|function" },
	  { 3, 0 } },
};

/* Substrings, in the lowercased text. */
static const struct {
	const char *rule, *what;
} marks[] = {
	{ "prompt_markup", "<important>" },   { "prompt_markup", "</important>" },
	{ "prompt_markup", "<system>" },      { "prompt_markup", "</system>" },
	{ "prompt_markup", "<instructions>" }, { "prompt_markup", "<|im_start|>" },
	{ "prompt_markup", "<|system|>" },    { "prompt_markup", "[system]" },
	{ "prompt_markup", "[inst]" },        { "prompt_markup", "<<sys>>" },
	{ "prompt_markup", "<secret>" },      { "prompt_markup", "<hidden>" },
	{ "secret_path", "~/.ssh" },          { "secret_path", "id_rsa" },
	{ "secret_path", "id_ed25519" },      { "secret_path", ".aws/credentials" },
	{ "secret_path", "mcp.json" },        { "secret_path", "/etc/shadow" },
	{ "secret_path", ".netrc" },          { "secret_path", ".kube/config" },
	{ "secret_path", ".docker/config.json" }, { "secret_path", ".git-credentials" },
	{ "secret_path", "claude_desktop_config" }, { "secret_path", ".gnupg" },
};

struct words {
	char *low;                 /* lowercased, one space between words */
	size_t *orig;              /* low[i] is text[orig[i]] */
	size_t nlow;
	size_t start[WORDS_MAX], wlen[WORDS_MAX];
	size_t n;
};

static int word_byte(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
}

static int build_words(const struct scan *s, struct words *w)
{
	size_t i, k;

	w->low = malloc(s->len + 1);
	w->orig = malloc((s->len + 1) * sizeof(size_t));
	if (!w->low || !w->orig)
		return -1;
	w->nlow = 0;
	for (i = 0; i < s->len; i++) {
		unsigned char ch = (unsigned char)s->text[i];

		if (ch >= 'A' && ch <= 'Z')
			ch = (unsigned char)(ch + 32);
		if (ch == '\'')
			continue; /* don't: dont */
		if (ch == 0xe2 && i + 2 < s->len && (unsigned char)s->text[i + 1] == 0x80 &&
		    (unsigned char)s->text[i + 2] == 0x99) {
			i += 2; /* the typographic apostrophe too */
			continue;
		}
		if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') {
			if (w->nlow && w->low[w->nlow - 1] == ' ')
				continue;
			ch = ' ';
		}
		w->orig[w->nlow] = i;
		w->low[w->nlow++] = (char)ch;
	}
	w->low[w->nlow] = '\0';
	/* the words: runs of letters and digits */
	w->n = 0;
	for (i = 0; i < w->nlow && w->n < WORDS_MAX;) {
		if (!word_byte((unsigned char)w->low[i])) {
			i++;
			continue;
		}
		for (k = i; k < w->nlow && word_byte((unsigned char)w->low[k]); k++) {
		}
		w->start[w->n] = i;
		w->wlen[w->n++] = k - i;
		i = k;
	}
	return 0;
}

static int word_is(const struct words *w, size_t at, const char *alts)
{
	const char *p = alts;

	while (*p) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == w->wlen[at] && memcmp(w->low + w->start[at], p, n) == 0)
			return 1;
		if (!bar)
			break;
		p = bar + 1;
	}
	return 0;
}

/* Whether phrase ph matches from slot k at word at (within n words). */
static int phrase_at(const struct words *w, const struct phrase *ph, int k, size_t at)
{
	int skip;

	if (!ph->slot[k])
		return 1;
	if (at >= w->n || !word_is(w, at, ph->slot[k]))
		return 0;
	if (!ph->slot[k + 1])
		return 1;
	for (skip = 0; skip <= ph->gap[k]; skip++)
		if (phrase_at(w, ph, k + 1, at + 1 + (size_t)skip))
			return 1;
	return 0;
}

static void scan_said(struct scan *s)
{
	struct words *w = calloc(1, sizeof(*w));
	size_t i, p;

	if (!w || build_words(s, w) < 0) {
		if (w) {
			free(w->low);
			free(w->orig);
		}
		free(w);
		add(s, "not_scanned", TG_SCAN_ESCAPE, 0, "out of memory");
		return;
	}
	for (p = 0; p < sizeof(phrases) / sizeof(phrases[0]); p++) {
		/* a rule found once a string is enough */
		for (i = 0; i < w->n; i++)
			if (phrase_at(w, &phrases[p], 0, i)) {
				add(s, phrases[p].rule, TG_SCAN_INSTRUCTION, w->orig[w->start[i]], NULL);
				break;
			}
	}
	for (p = 0; p < sizeof(marks) / sizeof(marks[0]); p++) {
		const char *hit = strstr(w->low, marks[p].what);

		if (hit)
			add(s, marks[p].rule, TG_SCAN_INSTRUCTION, w->orig[hit - w->low], NULL);
	}
	free(w->low);
	free(w->orig);
	free(w);
}

size_t tg_scan_text(const char *text, size_t len, const char *where,
		    struct tg_scan_finding *out, size_t max)
{
	struct scan s = { text, len > TEXT_MAX ? TEXT_MAX : len, where ? where : "", out, max, 0 };

	if (!text)
		return 0;
	scan_hidden(&s);
	scan_said(&s);
	if (len > TEXT_MAX)
		add(&s, "too_long", TG_SCAN_ESCAPE, TEXT_MAX, "scanned as far as 1 MiB");
	return s.n;
}

/* Every key and string of schema v, at path (where). */
static size_t scan_json(json_t *v, char *path, size_t plen, size_t cap,
			struct tg_scan_finding *out, size_t max, size_t n)
{
	const char *key;
	json_t *item;
	size_t i, at;

	if (json_is_string(v))
		return n + tg_scan_text(json_string_value(v), json_string_length(v), path,
					n < max ? out + n : NULL, n < max ? max - n : 0);
	if (json_is_object(v)) {
		json_object_foreach(v, key, item) {
			at = plen + (size_t)snprintf(path + plen, cap - plen, "/%s", key);
			if (at >= cap)
				at = cap - 1;
			n += tg_scan_text(key, strlen(key), path, n < max ? out + n : NULL,
					  n < max ? max - n : 0);
			n = scan_json(item, path, at, cap, out, max, n);
			path[plen] = '\0';
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item) {
			at = plen + (size_t)snprintf(path + plen, cap - plen, "/%zu", i);
			if (at >= cap)
				at = cap - 1;
			n = scan_json(item, path, at, cap, out, max, n);
			path[plen] = '\0';
		}
	}
	return n;
}

size_t tg_scan_contract(const struct tg_contract *k, struct tg_scan_finding *out, size_t max)
{
	const char *texts[2] = { k->input_schema_text, k->output_schema_text };
	const char *names[2] = { "input_schema", "output_schema" };
	char path[128];
	size_t n = 0, i;

	if (k->title)
		n += tg_scan_text(k->title, strlen(k->title), "title", out, max);
	if (k->description)
		n += tg_scan_text(k->description, strlen(k->description), "description",
				  n < max ? out + n : NULL, n < max ? max - n : 0);
	for (i = 0; i < 2; i++) {
		json_t *schema = texts[i] ? json_loads(texts[i], JSON_PRESERVE_ORDER, NULL) : NULL;

		if (!schema)
			continue;
		snprintf(path, sizeof(path), "%s", names[i]);
		n = scan_json(schema, path, strlen(path), sizeof(path), out, max, n);
		json_decref(schema);
	}
	return n;
}

void tg_scan_describe(const struct tg_scan_finding *f, char *out, size_t len)
{
	snprintf(out, len, "%s in %s at byte %zu: %s", f->rule, f->where, f->offset, f->excerpt);
}
