/* Unit tests: src/util/toml.c, the strict reader of the TOML subset
 * gitleaks configurations use: a configuration in gitleaks' shape read
 * into the same JSON shape, every kind of string and number, and each
 * refusal by its message, line and column. */
#include <jansson.h>
#include <string.h>

#include "unit.h"
#include "util/toml.h"

/* text read: its JSON compact and sorted, compared with want. */
static int reads_as(const char *text, const char *want)
{
	struct tg_error err;
	json_t *doc;
	char *got;
	int same;

	if (toml_parse(text, strlen(text), "t.toml", &doc, &err) < 0) {
		fprintf(stderr, "refused: %s\n", err.msg);
		return 0;
	}
	got = json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS);
	same = got && strcmp(got, want) == 0;
	if (!same)
		fprintf(stderr, "got  %s\nwant %s\n", got ? got : "(null)", want);
	free(got);
	json_decref(doc);
	return same;
}

/* text refused with a message holding want. */
static int refused(const char *text, const char *want)
{
	struct tg_error err;
	json_t *doc;

	if (toml_parse(text, strlen(text), "t.toml", &doc, &err) == 0) {
		json_decref(doc);
		fprintf(stderr, "accepted: %s\n", text);
		return 0;
	}
	if (!strstr(err.msg, want)) {
		fprintf(stderr, "message: %s\nwant: %s\n", err.msg, want);
		return 0;
	}
	return 1;
}

static int gitleaks_shape(void)
{
	static const char text[] =
		"# a configuration in gitleaks' shape\n"
		"title = \"acme config\"\n"
		"\n"
		"[extend]\n"
		"useDefault = true\n"
		"disabledRules = [\"generic-api-key\"]\n"
		"\n"
		"[allowlist]\n"
		"description = \"global\"\n"
		"paths = [\n"
		"  '''gitleaks.toml''',\n"
		"  '''(.*?)(jpg|pdf)$''', # images\n"
		"]\n"
		"stopwords = [\"example\", \"sample\",]\n"
		"\n"
		"[[rules]]\n"
		"id = \"acme-key\"\n"
		"description = \"ACME API key\"\n"
		"regex = '''(?i)acme[_-]?key\\s*[:=]\\s*['\"]?([a-z0-9]{32})'''\n"
		"secretGroup = 1\n"
		"entropy = 3.5\n"
		"keywords = [\"acme\"]\n"
		"[rules.allowlist]\n"
		"regexTarget = \"match\"\n"
		"regexes = ['''acme_key=0{32}''']\n"
		"\n"
		"[[rules]]\n"
		"id = \"b\"\n"
		"regex = 'b[0-9]+'\n"
		"[[rules.allowlists]]\n"
		"paths = ['''^test/''']\n"
		"[[rules.allowlists]]\n"
		"stopwords = [\"dummy\"]\n";

	CHECK(reads_as(text,
		       "{\"allowlist\":{\"description\":\"global\",\"paths\":[\"gitleaks.toml\","
		       "\"(.*?)(jpg|pdf)$\"],\"stopwords\":[\"example\",\"sample\"]},"
		       "\"extend\":{\"disabledRules\":[\"generic-api-key\"],\"useDefault\":true},"
		       "\"rules\":[{\"allowlist\":{\"regexTarget\":\"match\",\"regexes\":"
		       "[\"acme_key=0{32}\"]},\"description\":\"ACME API key\",\"entropy\":3.5,"
		       "\"id\":\"acme-key\",\"keywords\":[\"acme\"],\"regex\":"
		       "\"(?i)acme[_-]?key\\\\s*[:=]\\\\s*['\\\"]?([a-z0-9]{32})\","
		       "\"secretGroup\":1},{\"allowlists\":[{\"paths\":[\"^test/\"]},"
		       "{\"stopwords\":[\"dummy\"]}],\"id\":\"b\",\"regex\":\"b[0-9]+\"}],"
		       "\"title\":\"acme config\"}"));
	return 0;
}

static int strings_and_numbers(void)
{
	CHECK(reads_as("a = \"tab\\tq\\\"\\u00e9\\U0001F600\"\n",
		       "{\"a\":\"tab\\tq\\\"\xc3\xa9\xf0\x9f\x98\x80\"}"));
	CHECK(reads_as("a = 'C:\\path\\no-escape'\n", "{\"a\":\"C:\\\\path\\\\no-escape\"}"));
	/* multi-line: the first newline trimmed; a line-ending backslash joins */
	CHECK(reads_as("a = \"\"\"\none \\\n    two\"\"\"\n", "{\"a\":\"one two\"}"));
	CHECK(reads_as("a = '''\nx\ny'''\n", "{\"a\":\"x\\ny\"}"));
	CHECK(reads_as("a = '''it's'''''\n", "{\"a\":\"it's''\"}"));
	CHECK(reads_as("a = 1_000\nb = -17\nc = +0.5\nd = 6.02e23\ne = false\n",
		       "{\"a\":1000,\"b\":-17,\"c\":0.5,\"d\":6.02e23,\"e\":false}"));
	CHECK(reads_as("\"quoted key\" = 1\na.b.c = 2\nt = { x = 1, y.z = [1, 2] }\n",
		       "{\"a\":{\"b\":{\"c\":2}},\"quoted key\":1,\"t\":{\"x\":1,\"y\":{\"z\":[1,2]}}}"));
	CHECK(reads_as("a = [\n  1, # one\n  [2, 3],\n]\r\nb = []\n", "{\"a\":[1,[2,3]],\"b\":[]}"));
	CHECK(reads_as("[a.b]\nx = 1\n[a]\ny = 2\n", "{\"a\":{\"b\":{\"x\":1},\"y\":2}}"));
	/* an exponent's sign after 4 characters is not a date's dash */
	CHECK(reads_as("a = 1.5e-3\nb = 100e-5\nc = 1e-320\n",
		       "{\"a\":0.0015,\"b\":0.001,\"c\":9.9998886718268301e-321}"));
	/* a byte order mark; a dotted key through a table a header only made on the way */
	CHECK(reads_as("\xEF\xBB\xBF" "a = 1\n", "{\"a\":1}"));
	CHECK(reads_as("[a.b.c]\n[a]\nb.x = 1\n[a.b.d]\n",
		       "{\"a\":{\"b\":{\"c\":{},\"d\":{},\"x\":1}}}"));
	CHECK(reads_as("", "{}"));
	return 0;
}

static int refusals(void)
{
	CHECK(refused("a = 1\na = 2\n", "t.toml: line 2, column 1: key a given twice"));
	/* at the key, not at the end of its value */
	CHECK(refused("a = 1\na = '''\nx\n'''\n", "line 2, column 1: key a given twice"));
	CHECK(refused("t = {x = [\n1], x = 2}\n", "line 2, column 5: key x given twice"));
	CHECK(refused("[t]\n[t]\n", "line 2, column 1: table t defined twice"));
	/* toml-test's table/append-with-dotted-keys-01; a header after a dotted key */
	CHECK(refused("[a.b.c]\nz = 9\n[a]\nb.c.t = 1\n",
		      "line 4, column 1: table c was defined by a header"));
	CHECK(refused("[a.b.c]\n[a]\nb.x = 1\n[a.b]\n", "line 4, column 1: table b defined twice"));
	CHECK(refused("s = \"\"\"a\\\n\r b\"\"\"\n", "line 2, column 1: a control character"));
	CHECK(refused("a = TRUE\n", "not a value"));
	CHECK(refused("a.b = 1\n[a]\n", "table a defined twice"));
	CHECK(refused("a = 1\n[a]\n", "a is a value already"));
	CHECK(refused("a = [1]\n[[a]]\n", "a is a value already"));
	CHECK(refused("[[a]]\n[a]\n", "a is an array of tables: [[a]] adds one"));
	CHECK(refused("t = {x = 1}\n[t]\n", "t is a value already"));
	CHECK(refused("t = {x = 1}\nt.y = 2\n", "t is a value already"));
	CHECK(refused("d = 1979-05-27\n", "dates and times are not in the subset"));
	CHECK(refused("d = 07:32:00\n", "dates and times are not in the subset"));
	CHECK(refused("h = 0xff\n", "hexadecimal, octal and binary integers"));
	CHECK(refused("f = inf\n", "inf and nan are not in the subset"));
	CHECK(refused("n = 012\n", "not a value"));
	CHECK(refused("n = 1__2\n", "an underscore in a number goes between two digits"));
	CHECK(refused("n = 99999999999999999999\n", "out of 64 bits"));
	CHECK(refused("f = 1e999\n", "out of range"));
	CHECK(refused("s = \"\\x41\"\n", "an escape TOML does not have"));
	CHECK(refused("s = \"\\uD800\"\n", "is not a Unicode scalar value"));
	CHECK(refused("s = \"a\\u0000b\"\n", "a NUL (\\u0000) in a string"));
	CHECK(refused("s = \"open\n", "a string not closed on its line"));
	CHECK(refused("s = '''open\n", "a string not closed (''')"));
	CHECK(refused("s = \"a\tb\x01\"\n", "a control character in a string"));
	CHECK(refused("a = 1 b = 2\n", "more on the line after the value"));
	CHECK(refused("a = yes\n", "not a value"));
	CHECK(refused("= 1\n", "a key expected"));
	CHECK(refused("a 1\n", "= expected after a key"));
	CHECK(refused("[a\n", "] expected to close the header"));
	CHECK(refused("a = [1 2]\n", "separated by commas"));
	CHECK(refused("t = {a = 1,\n b = 2}\n", "a key expected"));
	CHECK(refused("a = \"\xff\"\n", "not UTF-8 text"));
	return 0;
}

static int ceilings(void)
{
	struct tg_error err;
	json_t *doc;
	char *deep = malloc(4096), *big = malloc(TOML_MAX + 2), *tables = malloc(200000);
	size_t n = 0;

	CHECK(deep && big && tables);
	n = (size_t)sprintf(deep, "a = ");
	for (int i = 0; i < 40; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	CHECK(refused(deep, "arrays and tables more than 16 deep"));
	memset(big, '#', TOML_MAX + 1);
	big[TOML_MAX + 1] = '\0';
	CHECK(toml_parse(big, TOML_MAX + 1, "big.toml", &doc, &err) < 0 &&
	      err.code == TG_ERR_LIMIT && strstr(err.msg, "big.toml: larger than"));
	n = 0;
	for (int i = 0; i < 5000; i++)
		n += (size_t)sprintf(tables + n, "[t%d]\n", i);
	CHECK(refused(tables, "more than 4096 tables"));
	free(deep);
	free(big);
	free(tables);
	return 0;
}

const struct unit_test toml_tests[] = {
	{ "toml/gitleaks_shape", gitleaks_shape },
	{ "toml/strings_and_numbers", strings_and_numbers },
	{ "toml/refusals", refusals },
	{ "toml/ceilings", ceilings },
	UNIT_TESTS_END,
};
