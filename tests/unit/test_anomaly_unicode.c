/*
 * Unit tests: the unicode anomaly rule (src/auth/anomaly_unicode.c) and
 * the hidden characters it rests on (src/util/hidden.c). Trojan Source
 * strings, terminal escapes, tag characters (ASCII smuggling, flags that
 * are not RGI), zero-width characters after what is not a letter of a
 * script that joins, variation selectors after what they do not vary
 * (smuggling), the unassigned ignorables and scripts' format controls out
 * of their script are flagged; right-to-left text with its marks,
 * Persian's non-joiner, emoji sequences and the subdivision flags, Indic,
 * Khmer, Myanmar and Japanese joiners and breaks, CRLF, soft hyphens,
 * emoji, standardized and ideographic variation sequences are not. The
 * table covers Unicode's Default_Ignorable_Code_Point and Cf (from
 * Debian's unicode-data, when installed). Then what a person reads: the display
 * form (every hidden character escaped, backslashes doubled, cut), JSON
 * escaped for a terminal (the same values), the walk with the schema
 * (enum, x-toolgate-allow, a declared language, member names), and a
 * ticket as `toolgate approvals show` and the admin API print it.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/anomaly_int.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "unit.h"
#include "util/hidden.h"
#include "util/utf8.h"

#define UNICODE_BIT TG_ANOMALY_BIT(TG_ANOMALY_UNICODE)

struct sample {
	const char *s;
	size_t n;
};

#define S(lit) { lit, sizeof(lit) - 1 }

/* (C forbids \u escapes below U+00A0: C1 controls are written as bytes) */
static const struct sample attacks[] = {
	/* Trojan Source: what runs is not the order shown */
	S("if access_level != \"user\u202E \u2066// Check if admin\u2069 \u2066\" {"),
	S("/* begin admins only */ if (isAdmin) {\u2067 \u2066"),
	S("invoice\u202Egpj.exe"),
	S("\u2067abc\u2069"),
	S("\u202Aembedded\u202C"),
	S("\u202Bright to left embedding"),
	S("\u202Dleft to right override"),
	S("\u2068first strong isolate\u2069"),
	S("x\u2069"),
	/* a terminal acts on these */
	S("\x1b[2J\x1b[Hall clear"),
	S("ok\x1b]0;owned\x07"),
	S("text\xc2\x9b" "31mred"),
	S("safe command\rrm -rf /"),
	S("bell\x07"),
	S("back\x08\x08\x08space"),
	S("del\x7f"),
	S("a\x01" "b"),
	S("vertical\x0btab"),
	S("\xc2\x85next line"),
	/* ASCII smuggling in tag characters */
	S("hello\U000E0049\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065"),
	S("\U000E0001\U000E0065\U000E006E"),
	S("x\U000E007F"),
	S("broken flag \U0001F3F4\U000E0067\U000E0062"),
	S("\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E0067\U000E0067"
	  "\U000E0067\U000E007F"),
	/* zero-width and blank characters in ASCII words */
	S("ad\u200Bmin"),
	S("pay\u200Dpal.com"),
	S("\uFEFFstart"),
	S("admin\u200B"),
	S("a\u2060b"),
	S("rm\u200C -rf"),
	S("timeout,\u3164}"),
	S("\u3164"),
	S("a\u180Eb"),
	S("ab\u115Fcd"),
	S("x\U0001D173y"),
	/* a run spells bits, whatever surrounds it */
	S("\u65E5\u672C\u200B\u200C\u200B\u200D\u8A9E"),
	S("\U0001F600\U000E0100\U000E0101\U000E0102"),
	S("x\uFE0F\uFE0F"),
	/* variation-selector smuggling: one selector a letter, a byte each
	 * ("hello" shown, "hello" and five hidden bytes read) */
	S("h\U000E0172e\U000E0170l\U000E0163l\U000E0163o\U000E0164"),
	S("hello\uFE01"),
	S("x\uFE0F"),
	S("\u65E5\uFE0E"),
	S("\u845B\uFE03"),
	S("\U0001F600\U000E0100"),
	S("a\u180Bb"),
	/* tag characters after a black flag that name no RGI flag */
	S("\U0001F3F4\U000E0068\U000E0069\U000E007F"),
	S("\U0001F3F4\U000E0075\U000E0073\U000E0063\U000E0061\U000E007F"),
	S("\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"
	  "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0068\U000E007F"),
	/* zero-width characters after what is not a letter of a script that
	 * joins: no-break space, Latin-1, Cyrillic, punctuation, an emoji
	 * (but for its joiner), an ideographic space */
	S("ad\u00A0\u200Bmin"),
	S("caf\u00E9\u200Bx"),
	S("\u0416\u200D\u0416"),
	S("\u2022\u200C"),
	S("\U0001F600\u200Bx"),
	S("\u3000\u200B"),
	S("a\u00AE\u200Cb"),
	/* invisible format characters */
	S("x\u2062y"),
	S("\u206Adeprecated"),
	S("a\uFFF9hidden\uFFFAannotation\uFFFBb"),
	S("\U000E0080"),
	S("\U000E01F0"),
	/* the rest of Default_Ignorable and Cf: unassigned ignorables,
	 * format controls of a script outside it */
	S("a\uFFF0b"),
	S("\uFFF8"),
	S("x\U00013430y"),
	S("\U00013000\U00013430\U00013431"),
	S("ab\U0001BCA0"),
};

static const struct sample benign[] = {
	S("\u0645\u0631\u062D\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645"),
	S("\u05E9\u05DC\u05D5\u05DD\u200F 123"),
	S("\u200F\u05DE\u05D7\u05D9\u05E8: 50 \u20AA"),
	S("\u0661\u0662\u0663\u061C-\u0664\u0665\u0666"),
	S("Version\u200E 2.0"),
	S("\u0645\u06CC\u200C\u062E\u0648\u0627\u0647\u0645"),
	S("\u06A9\u062A\u0627\u0628\u200C\u0647\u0627"),
	S("\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466"),
	S("\u2764\uFE0F\u200D\U0001F525"),
	S("\U0001F3F3\uFE0F\u200D\U0001F308 pride"),
	S("\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F go England"),
	S("\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F"),
	S("1\uFE0F\u20E3 first"),
	S("\u00A9\uFE0F 2024"),
	S("I love it \u2764\uFE0F"),
	S("\u0915\u094D\u200D\u0937"),
	S("\u0915\u094D\u200C\u0937"),
	S("\u0D28\u0D4D\u200D word"),
	S("\u0E2A\u0E27\u0E31\u0E2A\u0E14\u0E35\u200B\u0E04\u0E23\u0E31\u0E1A"),
	S("\u65E5\u672C\u200B\u8A9E"),
	S("line one\r\nline two\r\n"),
	S("a\tb\nc"),
	S("Donau\u00ADdampf\u00ADschiff"),
	S("\u845B\U000E0100\u98FE\u533A"),
	S("\U0001F44D\U0001F3FD thanks"),
	S("\u00DCn\u00EFc\u00F6d\u00E9 fa\u00E7ade na\u00EFve r\u00E9sum\u00E9"),
	S("\u4F60\u597D\uFF0C\u4E16\u754C"),
	S("\uC548\uB155\uD558\uC138\uC694"),
	S("\u2211 x\u00B2 \u2264 \u03C0"),
	S("Line\u2028separator and paragraph\u2029separator"),
	S("\u041F\u0440\u0438\u0432\u0435\u0442, \u03BA\u03CC\u03C3\u03BC\u03B5"),
	S("coding \U0001F469\u200D\U0001F4BB all day"),
	S("\u1820\u180B"),
	S("C:\\Users\\me\\report.txt"),
	S("\\u202E is the right-to-left override"),
	S("price: 5\u00A0\u20AC"),
	/* real variation sequences: emoji and text presentation, keycaps,
	 * standardized variants (a slashed zero, math, Myanmar, CJK
	 * compatibility ideographs), Mongolian */
	S("#\uFE0F\u20E3 \u00AE\uFE0F \u2122\uFE0E \u203C\uFE0F \u263A\uFE0F"),
	S("0\uFE00 \u2229\uFE00 \u1000\uFE00 \u8C48\uFE00"),
	S("\u1823\u180B\u1828\u180C"),
	/* the three RGI subdivision flags, emoji joined after skin tones and
	 * presentation selectors */
	S("\U0001F3F4\U000E0067\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F Cymru"),
	S("\U0001F469\U0001F3FD\u200D\U0001F4BB \U0001F3F3\uFE0F\u200D\u26A7\uFE0F"),
	/* zero-width characters in scripts that write with them: Japanese
	 * after a prolonged sound mark, Khmer, Myanmar, Korean, Arabic after
	 * a tatweel; Egyptian hieroglyphs with their format controls */
	S("\u30B3\u30FC\u30D2\u30FC\u200B\u3092"),
	S("\u1781\u17D2\u1798\u17C2\u179A\u200B\u1797\u17B6\u179F\u17B6"),
	S("\u1019\u103C\u1014\u103A\u200B\u1019\u102C"),
	S("\uD55C\uAD6D\uC5B4\u200B\uBB38\uC7A5"),
	S("\u0644\u0640\u200D"),
	S("\U00013000\U00013430\U00013001"),
	S("\u0600\u0661\u0662\u0663"),
};

/* Whether the string rules flag x with unicode (-1: a why not printable). */
static int flagged(const struct sample *x, char *why, size_t cap)
{
	struct tg_anomaly_finding f[TG_ANOMALY_RULES];
	size_t n = tg_anomaly_scan_string(x->s, x->n, TG_ANOMALY_STRING_RULES, f, TG_ANOMALY_RULES),
	       i, k;
	int hit = 0;

	for (i = 0; i < n; i++) {
		for (k = 0; f[i].why[k]; k++)
			if ((unsigned char)f[i].why[k] < 0x20 || (unsigned char)f[i].why[k] > 0x7e)
				return -1;
		if (f[i].rule == TG_ANOMALY_UNICODE) {
			hit = 1;
			snprintf(why, cap, "%s", f[i].why);
		}
	}
	return hit;
}

static int corpus(void)
{
	size_t i, found = 0, fp = 0, na = sizeof(attacks) / sizeof(attacks[0]),
		  nb = sizeof(benign) / sizeof(benign[0]);
	char why[256];

	for (i = 0; i < na; i++) {
		int hit = flagged(&attacks[i], why, sizeof(why));

		CHECK(hit >= 0);
		found += (size_t)hit;
		if (!hit)
			fprintf(stderr, "not flagged: attack %zu\n", i);
	}
	for (i = 0; i < nb; i++) {
		struct tg_anomaly_finding f[TG_ANOMALY_RULES];
		size_t n = tg_anomaly_scan_string(benign[i].s, benign[i].n, TG_ANOMALY_STRING_RULES, f,
						  TG_ANOMALY_RULES);

		if (n) {
			fprintf(stderr, "flagged: benign %zu: %s: %s\n", i,
				tg_anomaly_rule_name(f[0].rule), f[0].why);
			fp++;
		}
	}
	printf("# anomaly corpus: unicode detected %zu/%zu, false positives %zu/%zu benign\n",
	       found, na, fp, nb);
	CHECK(found == na && na >= 40);
	CHECK(fp == 0 && nb >= 30);
	return 0;
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The rule's why: what the character is, escaped, and an excerpt. */
static int said(void)
{
	struct tg_anomaly_finding f[2];
	static const char esc[] = "ok\x1b[31m", cr[] = "safe\rrm", nul[] = "a\0b\x01",
			  tags[] = "hi\U000E0069\U000E0067\U000E006E\U000E005C\U000E0072";
	char big[512];
	size_t k;

	CHECK(tg_anomaly_scan_string("invoice\u202Egpj.exe", 17, UNICODE_BIT, f, 2) == 1);
	CHECK(f[0].rule == TG_ANOMALY_UNICODE &&
	      strcmp(f[0].why, "bidi control \\u202E: invoice\\u202Egpj.exe") == 0);
	CHECK(tg_anomaly_scan_string(esc, sizeof(esc) - 1, UNICODE_BIT, f, 2) == 1);
	CHECK(strcmp(f[0].why, "terminal escape \\u001B: ok\\u001B[31m") == 0);
	CHECK(tg_anomaly_scan_string(cr, sizeof(cr) - 1, UNICODE_BIT, f, 2) == 1);
	CHECK(strcmp(f[0].why, "carriage return without a newline \\u000D: safe\\u000Drm") == 0);
	/* a NUL is the traversal rule's; the SOH after it is this one's */
	CHECK(tg_anomaly_scan_string(nul, sizeof(nul) - 1, UNICODE_BIT, f, 2) == 1);
	CHECK(strcmp(f[0].why, "control character \\u0001: a\\u0000b\\u0001") == 0);
	CHECK(tg_anomaly_scan_string(tags, sizeof(tags) - 1, UNICODE_BIT, f, 2) == 1);
	CHECK(starts(f[0].why, "tag characters spelling \"ign\\\\r\": hi\\u{E0069}"));
	/* a selector that varies nothing, a space joining nothing */
	CHECK(tg_anomaly_scan_string("h\U000E0172i", 6, UNICODE_BIT, f, 2) == 1);
	CHECK(strcmp(f[0].why, "variation selector after a character it does not vary "
			       "\\u{E0172}: h\\u{E0172}i") == 0);
	CHECK(tg_anomaly_scan_string("ad\u00A0\u200Bmin", 10, UNICODE_BIT, f, 2) == 1);
	CHECK(strcmp(f[0].why, "invisible character outside the writing it belongs to "
			       "\\u200B: ad\\xc2\\xa0\\u200Bmin") == 0);
	/* from 16 bytes before, at most 60 bytes, cut */
	k = (size_t)snprintf(big, sizeof(big), "%s\u202E", "0123456789abcdefghijklmnop");
	while (k < 200)
		big[k++] = 'x';
	CHECK(tg_anomaly_scan_string(big, k, UNICODE_BIT, f, 2) == 1);
	CHECK(starts(f[0].why, "bidi control \\u202E: abcdefghijklmnop\\u202Exxx"));
	CHECK(strlen(f[0].why) < sizeof(f[0].why) - 1 &&
	      strcmp(f[0].why + strlen(f[0].why) - 3, "...") == 0);
	/* not UTF-8: not this rule's (the validator takes none) */
	CHECK(tg_anomaly_scan_string("\xff\xfe\x80", 3, UNICODE_BIT, f, 2) == 0);
	return 0;
}

/* The display form of literal s, whole, equals want; count hidden. */
#define SHOWS(s, want, count) shows(s, sizeof(s) - 1, want, count)

static int shows(const char *s, size_t n, const char *want, size_t count)
{
	size_t c = 99;
	char *d = hidden_display_new(s, n, &c);
	int ok = d && strcmp(d, want) == 0 && c == count;

	if (!ok)
		fprintf(stderr, "display: got \"%s\" (%zu), want \"%s\" (%zu)\n", d ? d : "(null)", c,
			want, count);
	free(d);
	return ok;
}

static int display(void)
{
	char cut[16];

	CHECK(SHOWS("a\u202Eb\\c", "a\\u202Eb\\\\c", 1));
	CHECK(SHOWS("x\U000E0041y", "x\\u{E0041}y", 1));
	CHECK(SHOWS("\xff" "a\0\x1b\t\n\r\n", "\\xFFa\\u0000\\u001B\t\n\\u000D\n", 4));
	/* shown even where it is not flagged: marks, separators, joiners */
	CHECK(SHOWS("Version\u200E 2", "Version\\u200E 2", 1));
	CHECK(SHOWS("\u06CC\u200C\u062E", "\u06CC\\u200C\u062E", 1));
	CHECK(SHOWS("a\u2028b\u00ADc", "a\\u2028b\\u00ADc", 2));
	/* selectors and tag characters, wherever they are: a flag's name, a
	 * heart's presentation, and those that smuggle bytes alike */
	CHECK(SHOWS("\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F",
		    "\U0001F3F4\\u{E0067}\\u{E0062}\\u{E0065}\\u{E006E}\\u{E0067}\\u{E007F}", 6));
	CHECK(SHOWS("\u2764\uFE0F\uFE0F", "\u2764\\uFE0F\\uFE0F", 2));
	CHECK(SHOWS("h\U000E0172i\uFE01", "h\\u{E0172}i\\uFE01", 2));
	CHECK(SHOWS("\u845B\U000E0100", "\u845B\\u{E0100}", 1));
	/* the rest of Default_Ignorable and Cf */
	CHECK(SHOWS("a\uFFF0\U00013430\u0600", "a\\uFFF0\\u{13430}\\u0600", 3));
	CHECK(SHOWS("plain \u00E9", "plain \u00E9", 0));
	CHECK(SHOWS("", "", 0));
	CHECK(hidden_count("a\u202Eb", 5) == 1 && hidden_count("ab", 2) == 0);
	/* cut: a prefix, never inside an escape or a character; the whole length */
	CHECK(hidden_display("abc\u202Edef", 9, cut, 6, NULL) == 12 && strcmp(cut, "abc") == 0);
	CHECK(hidden_display("abc\u202Edef", 9, cut, 10, NULL) == 12 &&
	      strcmp(cut, "abc\\u202E") == 0);
	CHECK(hidden_display("\u00E9\u00E9", 4, cut, 4, NULL) == 4 && strcmp(cut, "\u00E9") == 0);
	CHECK(hidden_display("a\\b", 3, cut, 3, NULL) == 4 && strcmp(cut, "a") == 0);
	CHECK(hidden_display("abc", 3, cut, 1, NULL) == 3 && cut[0] == '\0');
	return 0;
}

/* JSON text for a terminal: no hidden character left, the same values. */
static int json_escaped(void)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s%}", "a", "x\u202Ey", "k\U000E0041",
			      "\xc2\x9b" "2J", "t", "\u00E9\u2764\uFE0F\uFE0F", "n", "a\0b", (size_t)3);
	char *text, *safe;
	json_t *back;

	CHECK(v);
	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	CHECK(text && hidden_count(text, strlen(text)) == 5);
	safe = hidden_json(text, strlen(text));
	CHECK(safe && hidden_count(safe, strlen(safe)) == 0 && utf8_valid(safe, strlen(safe)));
	CHECK(strstr(safe, "x\\u202Ey") && strstr(safe, "k\\uDB40\\uDC41") &&
	      strstr(safe, "\\u009B2J") && strstr(safe, "\u00E9\u2764\\uFE0F\\uFE0F"));
	back = json_loads(safe, JSON_ALLOW_NUL, NULL);
	CHECK(back && json_equal(back, v));
	json_decref(back);
	free(safe);
	free(text);
	json_decref(v);
	safe = hidden_json("\"\xff\"", 3);
	CHECK(safe && strcmp(safe, "\"\\uFFFD\"") == 0);
	free(safe);
	return 0;
}

static const char schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"q\":{\"type\":\"string\"},"
	"\"code\":{\"type\":\"string\",\"contentMediaType\":\"text/x-python\"},"
	"\"rtl\":{\"type\":\"string\",\"x-toolgate-allow\":[\"unicode\"]},"
	"\"mode\":{\"enum\":[\"fast\",\"\\u202Eslow\"]}},"
	"\"additionalProperties\":{\"type\":\"string\"}}";

static int scan(const char *args, unsigned rules, struct anomaly_report *r)
{
	json_t *s = json_loads(schema, 0, NULL), *a = json_loads(args, 0, NULL);

	if (!s || !a)
		return -1;
	anomaly_scan_arguments(s, a, strlen(args), rules, 0, r);
	json_decref(s);
	json_decref(a);
	return 0;
}

/* The schema's say, as for the other string rules; a declared language
 * is no leave: Trojan Source is in code. */
static int walk(void)
{
	struct anomaly_report r;

	CHECK(scan("{\"q\":\"invoice\\u202Egpj.exe\"}", TG_ANOMALY_ALL, &r) == 0);
	CHECK(r.total == 1 && r.f[0].rule == TG_ANOMALY_UNICODE && strcmp(r.f[0].at, "/q") == 0);
	CHECK(scan("{\"code\":\"if x:\\u2067 return\"}", TG_ANOMALY_ALL, &r) == 0 && r.total == 1 &&
	      r.f[0].rule == TG_ANOMALY_UNICODE);
	CHECK(scan("{\"rtl\":\"\\u2067abc\\u2069\"}", TG_ANOMALY_ALL, &r) == 0 && r.total == 0);
	CHECK(scan("{\"mode\":\"\\u202Eslow\"}", TG_ANOMALY_ALL, &r) == 0 && r.total == 0);
	CHECK(scan("{\"q\":\"\\u202E\"}", TG_ANOMALY_ALL & ~UNICODE_BIT, &r) == 0 && r.total == 0);
	/* a member name the schema does not declare: flagged, shown escaped */
	CHECK(scan("{\"a\\u202Eb\":\"x\"}", TG_ANOMALY_ALL, &r) == 0 && r.total == 1);
	CHECK(r.f[0].rule == TG_ANOMALY_UNICODE && strcmp(r.f[0].at, "/a\\u202Eb") == 0);
	/* a finding of another rule under such a name: its pointer escaped too */
	CHECK(scan("{\"k\\u200E\":\"$(id)\"}", TG_ANOMALY_ALL, &r) == 0 && r.total == 1);
	CHECK(r.f[0].rule == TG_ANOMALY_SHELL && strcmp(r.f[0].at, "/k\\u200E") == 0);
	return 0;
}

/* A ticket as `approvals show` and the admin API print it: no character
 * a person would not see, the display forms beside the real arguments. */
static int ticket_shown(void)
{
	struct tg_ticket t;
	json_t *j, *want;
	char *text;

	memset(&t, 0, sizeof(t));
	snprintf(t.id, sizeof(t.id), "%032d", 7);
	snprintf(t.principal, sizeof(t.principal), "agent");
	snprintf(t.tool, sizeof(t.tool), "fs.write@1.0.0");
	snprintf(t.args_sha256, sizeof(t.args_sha256), "%064d", 1);
	t.arguments = strdup("{\"content\":\"x\\u202Ey\\u0000\\u001b[2J\\\\\",\"path\":\"a.txt\"}");
	t.preview = strdup("+x\u202Ey \xc2\x9b");
	CHECK(t.arguments && t.preview);
	text = tg_ticket_to_json(&t, 1);
	CHECK(text && hidden_count(text, strlen(text)) == 0);
	CHECK(!strstr(text, "\u202E") && !strstr(text, "\xc2\x9b"));
	j = json_loads(text, JSON_ALLOW_NUL, NULL);
	want = json_loads(t.arguments, JSON_ALLOW_NUL, NULL);
	CHECK(j && want && json_equal(json_object_get(j, "arguments"), want));
	CHECK(strcmp(json_string_value(json_object_get(j, "args_sha256")), t.args_sha256) == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(j, "arguments_display"),
						       "content")),
		     "x\\u202Ey\\u0000\\u001B[2J\\\\") == 0);
	CHECK(strcmp(json_string_value(json_object_get(j, "preview_display")),
		     "+x\\u202Ey \\u009B") == 0);
	json_decref(want);
	json_decref(j);
	free(text);
	/* nothing hidden: no display forms */
	free(t.arguments);
	free(t.preview);
	t.arguments = strdup("{\"path\":\"\u00E9.txt\"}");
	t.preview = NULL;
	text = tg_ticket_to_json(&t, 0);
	CHECK(text && strstr(text, "\"arguments\":{\"path\":\"\u00E9.txt\"}") &&
	      !strstr(text, "_display"));
	free(text);
	free(t.arguments);
	/* arguments jansson cannot hold (past 64 bits) are shown, as text */
	t.arguments = strdup("{\"n\":123456789012345678901234567890}");
	text = tg_ticket_to_json(&t, 0);
	CHECK(text && strstr(text, "\"arguments\":\"{\\\"n\\\":123456789012345678901234567890}\""));
	free(text);
	free(t.arguments);
	return 0;
}

/* c as UTF-8 into out (4 bytes): its length. */
static size_t encode(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | (c >> 12 & 0x3f));
	out[2] = (char)(0x80 | (c >> 6 & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* The code points the UCD file path gives property prop ("00AD ; Cf",
 * "200B..200F ; Default_Ignorable_Code_Point"): each found by the scan,
 * alone, and escaped in the display form. How many; -1 when the file is
 * not there; -2 (said) when one is missed. */
static long ucd_found(const char *path, const char *prop)
{
	FILE *f = fopen(path, "re");
	char line[512], name[64], utf8[4], shown[32];
	unsigned lo, hi, c;
	long count = 0, missed = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%x..%x ; %63[A-Za-z_]", &lo, &hi, name) != 3) {
			if (sscanf(line, "%x ; %63[A-Za-z_]", &lo, name) != 2)
				continue;
			hi = lo;
		}
		if (strcmp(name, prop) != 0 || hi > 0x10ffff)
			continue;
		for (c = lo; c <= hi; c++) {
			size_t n = encode(c, utf8);

			hidden_display(utf8, n, shown, sizeof(shown), NULL);
			count++;
			if (hidden_count(utf8, n) != 1 || strncmp(shown, "\\u", 2) != 0) {
				if (missed++ < 10)
					fprintf(stderr, "U+%04X (%s) is not found: shown \"%s\"\n", c,
						prop, shown);
			}
		}
	}
	fclose(f);
	return missed ? -2 : count;
}

#define UCD "/usr/share/unicode/"

/* The table covers Unicode's Default_Ignorable_Code_Point and General
 * Category Cf, as Debian's unicode-data has them (skipped, saying so, when
 * it is not installed: scripts/install-deps.sh installs it). */
static int ucd_covered(void)
{
	long ignorable = ucd_found(UCD "DerivedCoreProperties.txt", "Default_Ignorable_Code_Point"),
	     cf = ucd_found(UCD "extracted/DerivedGeneralCategory.txt", "Cf");

	if (ignorable == -1 || cf == -1) {
		printf("# skipped: " UCD " has no Unicode data (apt-get install unicode-data)\n");
		return 0;
	}
	CHECK(ignorable > 4000 && cf > 150);
	printf("# unicode data: %ld Default_Ignorable_Code_Point and %ld Cf code points, each "
	       "found and escaped\n", ignorable, cf);
	return 0;
}

/* 4 MiB of hidden characters and of anything: linear, every why printable. */
static int large(void)
{
	const size_t n = 4u << 20;
	static const char *const fills[] = { "\u202E", "\u200B", "\U000E0041", "\xf0\x9f\x8f\xb4",
					     "\uFE0F", "a\r" };
	char *s = malloc(n), *d;
	struct tg_anomaly_finding f;
	size_t k, i, count;
	uint32_t x = 2463534242u;

	CHECK(s);
	for (k = 0; k <= sizeof(fills) / sizeof(fills[0]); k++) {
		for (i = 0; i < n; i++) {
			if (k == sizeof(fills) / sizeof(fills[0])) {
				x ^= x << 13;
				x ^= x >> 17;
				x ^= x << 5;
				s[i] = (char)x;
			} else {
				s[i] = fills[k][i % strlen(fills[k])];
			}
		}
		if (tg_anomaly_scan_string(s, n, UNICODE_BIT, &f, 1))
			for (i = 0; f.why[i]; i++)
				CHECK((unsigned char)f.why[i] >= 0x20 && (unsigned char)f.why[i] < 0x7f);
		d = hidden_display_new(s, n, &count);
		CHECK(d && hidden_count(d, strlen(d)) == 0 && utf8_valid(d, strlen(d)));
		free(d);
	}
	free(s);
	return 0;
}

const struct unit_test anomaly_unicode_tests[] = {
	{ "anomaly/unicode_corpus", corpus },
	{ "anomaly/unicode_said", said },
	{ "anomaly/unicode_display", display },
	{ "anomaly/unicode_ucd_covered", ucd_covered },
	{ "anomaly/unicode_json_escaped", json_escaped },
	{ "anomaly/unicode_walk", walk },
	{ "anomaly/unicode_ticket_shown", ticket_shown },
	{ "anomaly/unicode_large", large },
	UNIT_TESTS_END,
};
