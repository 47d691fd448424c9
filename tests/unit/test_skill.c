/*
 * Unit tests: Agent Skills read (src/skills/frontmatter.c, load.c), their
 * manifests (manifest.c), the trust store and the verdict on a signed
 * folder (trust.c, verify.c). Each refusal is checked by its message, so
 * that a test passes for the reason it names; the whole path (a skill
 * signed, then one byte changed) runs on files in a scratch folder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/skill.h"
#include "unit.h"

static int parse(const char *text, struct tg_skill_meta *m, struct tg_error *err)
{
	return tg_skill_frontmatter_parse(text, strlen(text), m, err);
}

static int frontmatter_fields(void)
{
	struct tg_skill_meta m;
	struct tg_error err;
	const char *text = "---\r\n"
			   "name: pdf-tools\n"
			   "description: >\n  Extracts text\n  from PDFs.\n"
			   "license: Apache-2.0\n"
			   "compatibility: needs python3\n"
			   "allowed-tools: Bash(python3:*) Read\n"
			   "metadata:\n  version: \"1.2\"\n  author: acme\n"
			   "---\n"
			   "# Body\n";

	CHECK(parse(text, &m, &err) == 0);
	CHECK(strcmp(m.name, "pdf-tools") == 0);
	CHECK(strcmp(m.description, "Extracts text from PDFs.\n") == 0);
	CHECK(strcmp(m.license, "Apache-2.0") == 0);
	CHECK(strcmp(m.compatibility, "needs python3") == 0);
	CHECK(strcmp(m.allowed_tools, "Bash(python3:*) Read") == 0);
	CHECK(m.version && strcmp(m.version, "1.2") == 0);
	CHECK(m.n_metadata == 2 && strcmp(m.metadata[1].key, "author") == 0 &&
	      strcmp(m.metadata[1].value, "acme") == 0);
	CHECK(strcmp(text + m.body, "# Body\n") == 0 && m.body_line == 13);
	tg_skill_meta_release(&m);
	/* the optional fields absent; a version as a bare number is its text */
	CHECK(parse("---\nname: a\ndescription: b\nmetadata: {version: 2.0}\n---\n", &m, &err) == 0);
	CHECK(!m.license && !m.compatibility && !m.allowed_tools);
	CHECK(strcmp(m.version, "2.0") == 0);
	tg_skill_meta_release(&m);
	tg_skill_meta_release(NULL);
	return 0;
}

/* Each text refused, with its message. */
static const struct {
	const char *text, *why;
} refused[] = {
	{ "name: a\n", "must begin with a '---' line" },
	{ "---\nname: a\ndescription: b\n", "no closing '---' line" },
	{ "---\n---\n", "the frontmatter is empty" },
	{ "---\n- a\n- b\n---\n", "line 2: the frontmatter is not a mapping" },
	{ "---\njust text\n---\n", "line 2: the frontmatter is not a mapping" },
	{ "---\nname: a\ndescription: b\nversion: 1\n---\n",
	  "line 4: field 'version' is not in the Agent Skills standard" },
	{ "---\nname: a\nname: a\ndescription: b\n---\n", "line 3: field 'name' given twice" },
	{ "---\nname: a\ndescription: b\nmetadata:\n  k: 1\n  k: 2\n---\n",
	  "line 6: metadata.k given twice" },
	{ "---\ndescription: b\n---\n", "the frontmatter has no name" },
	{ "---\nname: a\n---\n", "the frontmatter has no description" },
	{ "---\nname: Pdf\ndescription: b\n---\n", "name 'Pdf' may have only lowercase" },
	{ "---\nname: a--b\ndescription: b\n---\n", "name 'a--b' may have only" },
	{ "---\nname: -a\ndescription: b\n---\n", "name '-a' may have only" },
	{ "---\nname: a-\ndescription: b\n---\n", "name 'a-' may have only" },
	{ "---\nname: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
	  "description: b\n---\n",
	  "name is 65 characters, at most 64" },
	{ "---\nname: a\ndescription: \"\"\n---\n", "line 3: description is empty" },
	{ "---\nname: a\ndescription: [b]\n---\n", "line 3: description must be a string" },
	{ "---\nname: a\ndescription: b\nmetadata: x\n---\n", "metadata must be a mapping" },
	{ "---\nname: a\ndescription: b\nmetadata:\n  k: [1]\n---\n",
	  "line 5: metadata.k must be a string" },
	{ "---\nname: a\ndescription: &x b\n---\n", "an anchor (&x): anchors are not allowed" },
	{ "---\nname: a\ndescription: b\nlicense: *x\n---\n", "alias" },
	{ "---\nname: !!str a\ndescription: b\n---\n", "a tag (tag:yaml.org,2002:str)" },
	{ "---\nname: a\ndescription: \"b\\0c\"\n---\n", "description has a NUL character" },
	{ "---\nname: a\ndescription: b\n---\n---\nname: c\n", NULL }, /* a body may have '---' */
	{ "---\nname: a\ndescription: 'b\n---\n", "line " },
	{ "---\nname: a\ndescription: b\n...\nname: c\n---\n", "more than one document" },
	{ "---\nname: a\xff\ndescription: b\n---\n", "not UTF-8" },
};

static int frontmatter_refused(void)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct tg_skill_meta m;
		struct tg_error err;
		int rc = parse(refused[i].text, &m, &err);

		if (!refused[i].why) {
			CHECK(rc == 0);
			tg_skill_meta_release(&m);
			continue;
		}
		if (rc == 0 || !strstr(err.msg, refused[i].why)) {
			fprintf(stderr, "text %zu: %s\n", i, rc == 0 ? "accepted" : err.msg);
			return -1;
		}
	}
	return 0;
}

/* The bombs a YAML reader meets: refused at their first event, fast. */
static int frontmatter_bombs(void)
{
	struct tg_skill_meta m;
	struct tg_error err;
	size_t n = 60000, at = 0;
	char *text = malloc(n + 64);
	char *long_text = malloc(TG_SKILL_MD_MAX + 2);

	CHECK(text && long_text);
	at += (size_t)sprintf(text, "---\nname: a\ndescription: ");
	memset(text + at, '[', n);
	strcpy(text + at + n, "\n---\n");
	CHECK(parse(text, &m, &err) < 0 && strstr(err.msg, "description must be a string"));
	CHECK(parse("---\nname: a\ndescription: b\nlicense: &a [*a, *a]\n---\n", &m, &err) < 0 &&
	      strstr(err.msg, "anchors are not allowed"));
	/* a frontmatter over its ceiling, and a SKILL.md over its own */
	at = (size_t)sprintf(long_text, "---\nname: a\ndescription: b\n");
	memset(long_text + at, '#', TG_SKILL_FRONTMATTER_MAX + 10);
	strcpy(long_text + at + TG_SKILL_FRONTMATTER_MAX + 10, "\n---\n");
	CHECK(parse(long_text, &m, &err) < 0 && strstr(err.msg, "frontmatter is over"));
	memset(long_text, 'x', TG_SKILL_MD_MAX + 1);
	CHECK(tg_skill_frontmatter_parse(long_text, TG_SKILL_MD_MAX + 1, &m, &err) < 0 &&
	      err.code == TG_ERR_LIMIT);
	CHECK(tg_skill_frontmatter_parse("---\nname: a\0", 12, &m, &err) < 0 &&
	      strstr(err.msg, "NUL"));
	free(text);
	free(long_text);
	return 0;
}

/* A skill in dir/NAME with a script and a reference. */
static int make_skill(const char *dir, const char *name, char *path, size_t len)
{
	char sub[512], md[512];

	snprintf(path, len, "%s/%s", dir, name);
	snprintf(sub, sizeof(sub), "%s/scripts", path);
	if (mkdir(path, 0755) < 0 || mkdir(sub, 0755) < 0)
		return -1;
	snprintf(md, sizeof(md), "---\nname: %s\ndescription: A test skill.\n---\nRun it.\n",
		 name);
	if (unit_put(path, "SKILL.md", md, 0644) < 0 ||
	    unit_put(sub, "run.sh", "#!/bin/sh\necho hi\n", 0755) < 0 ||
	    unit_put(path, "b.md", "notes\n", 0644) < 0)
		return -1;
	return 0;
}

static int load_folder(void)
{
	char dir[64], path[512], file[600];
	struct tg_skill *s;
	struct tg_error err;

	CHECK(unit_tmpdir(dir, "skill") == 0);
	CHECK(make_skill(dir, "demo", path, sizeof(path)) == 0);
	CHECK(tg_skill_load(path, &s, &err) == 0);
	CHECK(s->n_files == 3);
	CHECK(strcmp(s->files[0].path, "SKILL.md") == 0 && strcmp(s->files[1].path, "b.md") == 0 &&
	      strcmp(s->files[2].path, "scripts/run.sh") == 0 && s->files[2].executable);
	CHECK(strncmp(s->skill_md, "---\nname: demo", 14) == 0);
	CHECK(strstr(s->manifest, "  scripts/run.sh\n") && strlen(s->manifest) == 3 * 67 +
	      strlen("SKILL.md") + strlen("b.md") + strlen("scripts/run.sh"));
	tg_skill_free(s);
	/* a link inside the skill is read as its target */
	snprintf(file, sizeof(file), "%s/scripts/again.sh", path);
	CHECK(symlink("run.sh", file) == 0);
	CHECK(tg_skill_load(path, &s, &err) == 0 && s->n_files == 4 && s->files[2].link);
	tg_skill_free(s);
	/* one that leaves it is refused, however it leaves */
	CHECK(unlink(file) == 0 && symlink("../../../etc/passwd", file) == 0);
	CHECK(tg_skill_load(path, &s, &err) < 0 && strstr(err.msg, "scripts/again.sh: a link "
							   "leaving the skill's folder"));
	CHECK(unlink(file) == 0 && symlink("/etc/passwd", file) == 0);
	CHECK(tg_skill_load(path, &s, &err) < 0 && strstr(err.msg, "leaving"));
	CHECK(unlink(file) == 0 && symlink("..", file) == 0);
	CHECK(tg_skill_load(path, &s, &err) < 0 && strstr(err.msg, "a link to a folder"));
	CHECK(unlink(file) == 0 && mkfifo(file, 0644) == 0);
	CHECK(tg_skill_load(path, &s, &err) < 0 && strstr(err.msg, "scripts/again.sh: a FIFO"));
	CHECK(unlink(file) == 0);
	/* the folder's name is the skill's */
	snprintf(file, sizeof(file), "%s/other", dir);
	CHECK(rename(path, file) == 0);
	CHECK(tg_skill_load(file, &s, &err) < 0 &&
	      strstr(err.msg, "name 'demo' is not the folder's name ('other')"));
	CHECK(tg_skill_load("/nonexistent/skill", &s, &err) < 0 && err.code == TG_ERR_SYSTEM);
	unit_rmtree(dir);
	return 0;
}

/* Names a terminal acts on (C1's CSI, U+009B) or shows reordered (U+202E)
 * are refused in the folder and in a manifest, as ESC is. */
static int load_hidden_names(void)
{
	static const char *const names[] = { "a\xc2\x9b" "2J.md", "a\xe2\x80\xaetxt.exe",
					     "a\xe2\x80\xa8" "b.md" };
	char dir[64], path[512], text[700];
	struct tg_skill_entry *e;
	struct tg_skill *s;
	struct tg_error err;
	size_t n;

	CHECK(unit_tmpdir(dir, "skillname") == 0);
	CHECK(make_skill(dir, "names", path, sizeof(path)) == 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK(unit_put(path, names[i], "x\n", 0644) == 0);
		CHECK(tg_skill_load(path, &s, &err) < 0 && strstr(err.msg, "a control character"));
		snprintf(text, sizeof(text), "%s/%s", path, names[i]);
		CHECK(unlink(text) == 0);
		snprintf(text, sizeof(text), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca4959"
			 "91b7852b855  %s\n", names[i]);
		CHECK(tg_skill_manifest_parse(text, strlen(text), &e, &n, &err) < 0 &&
		      strstr(err.msg, "bidi control"));
	}
	/* a letter beyond ASCII is a name like any other */
	CHECK(unit_put(path, "caf\xc3\xa9.md", "x\n", 0644) == 0);
	CHECK(tg_skill_load(path, &s, &err) == 0);
	tg_skill_free(s);
	unit_rmtree(dir);
	return 0;
}

/* The folder read, then swapped for a link to another: what is written or
 * read in it by name afterwards (sign's files, verify's manifest) must not
 * land in the other. */
static int load_folder_swapped(void)
{
	char dir[64], path[512], moved[600], elsewhere[600];
	struct tg_skill *s;
	struct tg_error err;
	int fd;

	CHECK(unit_tmpdir(dir, "skillswap") == 0);
	CHECK(make_skill(dir, "swap", path, sizeof(path)) == 0);
	CHECK(tg_skill_load(path, &s, &err) == 0);
	fd = tg_skill_dir_open(s, &err);
	CHECK(fd >= 0);
	close(fd);
	snprintf(moved, sizeof(moved), "%s/swap.real", dir);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", dir);
	CHECK(mkdir(elsewhere, 0755) == 0 && rename(path, moved) == 0 &&
	      symlink("elsewhere", path) == 0);
	CHECK(tg_skill_dir_open(s, &err) < 0 && strstr(err.msg, "no longer the folder"));
	CHECK(tg_skill_verify(s, NULL, time(NULL), NULL, 0, &err) == TG_VERDICT_MALFORMED &&
	      strstr(err.msg, "no longer the folder"));
	tg_skill_free(s);
	unit_rmtree(dir);
	return 0;
}

static int manifest_strict(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "abc  x\n", "line 1: not 'SHA-256  PATH'" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85G  a\n",
		  "64 lowercase hex" },
		{ "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855  a\n",
		  "64 lowercase hex" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 *a\n",
		  "not 'SHA-256  PATH'" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  ../a\n",
		  "'..' component" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  /etc/a\n",
		  "an absolute path" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a//b\n",
		  "an empty component" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  b\n"
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a\n",
		  "line 2: a is out of order" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a\n"
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a\n",
		  "line 2: a is listed twice" },
		{ "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  a",
		  "the last line has no newline" },
	};
	struct tg_skill_entry *e;
	struct tg_error err;
	size_t n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (tg_skill_manifest_parse(bad[i].text, strlen(bad[i].text), &e, &n, &err) == 0 ||
		    !strstr(err.msg, bad[i].why)) {
			fprintf(stderr, "manifest %zu: %s\n", i, err.msg);
			return -1;
		}
	CHECK(tg_skill_manifest_parse("", 0, &e, &n, &err) == 0 && n == 0);
	tg_skill_entries_free(e, n);
	return 0;
}

/* A key, a trust store holding it, and a skill signed with it: then each
 * verdict the ways a folder earns it. */
static int verify_verdicts(void)
{
	char dir[64], path[512], file[600], hex[17], store[1024], who[64];
	struct tg_sign_pub pub, other_pub;
	struct tg_sign_sec sec, other;
	struct tg_trust *trust;
	struct tg_skill *s;
	struct tg_error err;
	char *sig, *line, *b64;

	CHECK(unit_tmpdir(dir, "skillsig") == 0);
	CHECK(make_skill(dir, "signed", path, sizeof(path)) == 0);
	CHECK(tg_sign_keygen(&pub, &sec, &err) == 0 && tg_sign_keygen(&other_pub, &other, &err) == 0);
	line = tg_sign_pub_format(&pub);
	CHECK(line);
	b64 = strchr(line, '\n') + 1; /* the key's line, as minisign -P takes it */
	b64[strcspn(b64, "\n")] = '\0';
	snprintf(store, sizeof(store),
		 "{\"publishers\":[{\"name\":\"acme\",\"key\":\"%s\",\"expires\":\"2999-01-01\"}]}",
		 b64);
	free(line);
	CHECK(tg_trust_parse(store, strlen(store), "t.json", &trust, &err) == 0 && trust->n == 1);
	CHECK(tg_skill_load(path, &s, &err) == 0);
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) ==
		      TG_VERDICT_UNSIGNED &&
	      strstr(err.msg, "not signed"));
	sig = tg_sign_data(&sec, s->manifest, strlen(s->manifest), "t", &err);
	CHECK(sig && unit_put(path, TG_SKILL_MANIFEST, s->manifest, 0644) == 0 &&
	      unit_put(path, TG_SKILL_SIGNATURE, sig, 0644) == 0);
	free(sig);
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) == TG_VERDICT_OK &&
	      strcmp(who, "acme") == 0);
	/* past the key's expiry */
	CHECK(tg_skill_verify(s, trust, 32503680000 + 86400, who, sizeof(who), &err) ==
		      TG_VERDICT_UNTRUSTED &&
	      strstr(err.msg, "expired on 2999-01-01"));
	/* revoked: refused whatever the signature's date */
	trust->keys[0].revoked = 1;
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) ==
		      TG_VERDICT_UNTRUSTED &&
	      strstr(err.msg, "revoked on 1970-01-01"));
	trust->keys[0].revoked = 0;
	tg_skill_free(s);
	/* a byte changed in a script */
	snprintf(file, sizeof(file), "%s/scripts", path);
	CHECK(unit_put(file, "run.sh", "#!/bin/sh\necho ho\n", 0755) == 0);
	CHECK(tg_skill_load(path, &s, &err) == 0);
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) ==
		      TG_VERDICT_TAMPERED &&
	      strstr(err.msg, "scripts/run.sh: changed since the manifest was made"));
	tg_skill_free(s);
	CHECK(unit_put(file, "run.sh", "#!/bin/sh\necho hi\n", 0755) == 0);
	/* a file added */
	CHECK(unit_put(path, "extra.md", "x\n", 0644) == 0);
	CHECK(tg_skill_load(path, &s, &err) == 0);
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) ==
		      TG_VERDICT_TAMPERED &&
	      strstr(err.msg, "extra.md: not in the manifest"));
	/* signed by a key the store lacks */
	sig = tg_sign_data(&other, s->manifest, strlen(s->manifest), "t", &err);
	CHECK(sig && unit_put(path, TG_SKILL_MANIFEST, s->manifest, 0644) == 0 &&
	      unit_put(path, TG_SKILL_SIGNATURE, sig, 0644) == 0);
	free(sig);
	tg_sign_keyid_hex(other_pub.id, hex);
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) ==
		      TG_VERDICT_UNTRUSTED &&
	      strstr(err.msg, hex) && strstr(err.msg, "not among the keys trusted"));
	/* a signature cut short */
	CHECK(unit_put(path, TG_SKILL_SIGNATURE, "untrusted comment: x\nRUS\n", 0644) == 0);
	CHECK(tg_skill_verify(s, trust, time(NULL), who, sizeof(who), &err) ==
	      TG_VERDICT_MALFORMED);
	tg_skill_free(s);
	tg_trust_free(trust);
	tg_sign_sec_release(&sec);
	tg_sign_sec_release(&other);
	unit_rmtree(dir);
	return 0;
}

static int trust_store(void)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "[]", "must be an object" },
		{ "{\"keys\":[]}", "unknown field" },
		{ "{\"publishers\":{}}", "publishers: must be an array" },
		{ "{\"publishers\":[{\"name\":\"a\",\"key\":\"nope\"}]}", "publishers[0].key" },
		{ "{\"publishers\":[{\"name\":\"a\"}]}", "publishers[0].key" },
		{ "{\"publishers\":[{\"name\":\"a\",\"key\":\"x\",\"colour\":1}]}",
		  "publishers[0].colour" },
		{ "{\"publishers\":[],\"publishers\":[]}", "duplicate" },
		{ "{", "line 1" },
	};
	struct tg_trust *t;
	struct tg_error err;
	time_t when;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (tg_trust_parse(bad[i].text, strlen(bad[i].text), "t.json", &t, &err) == 0 ||
		    !strstr(err.msg, bad[i].why) || !strstr(err.msg, "t.json")) {
			fprintf(stderr, "store %zu: %s\n", i, err.msg);
			return -1;
		}
	CHECK(tg_trust_date("2027-06-30", &when) == 0 && when == 1814313600);
	CHECK(tg_trust_date("2027-06-30T12:00:00Z", &when) == 0 && when == 1814356800);
	CHECK(tg_trust_date("30/06/2027", &when) < 0 && tg_trust_date("2027-06-30x", &when) < 0);
	CHECK(tg_trust_date("2027-02-30", &when) < 0 && tg_trust_date("2027-6-3", &when) < 0);
	/* a year strftime would not write back as it was read (fuzz_manifest) */
	CHECK(tg_trust_date("0764-12-03", &when) < 0 && tg_trust_date("1969-12-31", &when) < 0);
	CHECK(strcmp(tg_verdict_name(TG_VERDICT_TAMPERED), "tampered") == 0);
	return 0;
}

const struct unit_test skill_tests[] = {
	{ "skill/frontmatter_fields", frontmatter_fields },
	{ "skill/frontmatter_refused", frontmatter_refused },
	{ "skill/frontmatter_bombs", frontmatter_bombs },
	{ "skill/load_folder", load_folder },
	{ "skill/load_hidden_names", load_hidden_names },
	{ "skill/load_folder_swapped", load_folder_swapped },
	{ "skill/manifest_strict", manifest_strict },
	{ "skill/verify_verdicts", verify_verdicts },
	{ "skill/trust_store", trust_store },
	UNIT_TESTS_END,
};
