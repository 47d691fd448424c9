/*
 * The dependencies a skill installs (docs/SKILLS.md, "Scanning"): pip and
 * npm install lines in its scripts and prose, requirements files and
 * package.json. Three rules: a package named within two letters of a
 * popular one and not it (typo-squatting, how most malicious packages
 * reach a victim), a package without a version (whatever is published
 * next runs), and packages from an index or URL other than the public
 * registry's.
 *
 * The popular names are the most downloaded of PyPI and npm; a name
 * within reach of one of them and not itself on the list is reported. The
 * list is short on purpose: what it misses an operator adds as a rule.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skills/skill_int.h"
#include "util/jload.h"

#define TOKEN_MAX 128

static const char *const pypi[] = {
	"requests", "urllib3", "numpy", "pandas", "boto3", "botocore", "setuptools", "certifi",
	"idna", "charset-normalizer", "python-dateutil", "typing-extensions", "six", "pyyaml",
	"packaging", "cryptography", "s3transfer", "pip", "wheel", "attrs", "attr", "jinja2",
	"markupsafe", "click", "pydantic", "pytest", "protobuf", "rsa", "pyasn1", "jmespath",
	"colorama", "flask", "django", "scipy", "matplotlib", "pillow", "beautifulsoup4", "lxml",
	"sqlalchemy", "psycopg2", "psycopg2-binary", "pymysql", "redis", "celery", "httpx",
	"aiohttp", "openai", "anthropic", "tqdm", "rich", "fastapi", "uvicorn", "gunicorn",
	"scikit-learn", "tensorflow", "torch", "transformers", "selenium", "paramiko", "pyjwt",
	"jsonschema", "docutils", "pygments", "tomli", "toml", "filelock", "virtualenv",
	"platformdirs", "requests-oauthlib", "oauthlib", "google-auth", "grpcio", "websocket-client",
	"pytz", "tzdata", "numba", "boto", "pyopenssl", "werkzeug", "markdown", "openpyxl",
	"xlrd", "pypdf", "pypdf2", "pdfplumber", "pymupdf", "reportlab", "python-docx",
	"python-pptx", "docx", "invoke", "fabric", "ansible", "black", "flake8", "mypy", "ruff",
	"isort", "pylint", "coverage", "tox", "nox", "poetry", "twine", "build", "dnspython",
	"colorlog", "loguru", "structlog", "yarl", "multidict", "frozenlist", "aiosignal",
	"pyparsing", "decorator", "wrapt", "cffi", "pycparser", "chardet", "simplejson", "ujson",
	"orjson", "pymongo", "elasticsearch", "kafka-python", "pika", "docker", "kubernetes",
	"PyGithub", "gitpython", "pyperclip", "keyring", "psutil", "sh", "plumbum", NULL,
};

static const char *const npm[] = {
	"lodash", "react", "react-dom", "express", "axios", "chalk", "commander", "debug",
	"moment", "request", "uuid", "yargs", "typescript", "webpack", "babel-core", "eslint",
	"prettier", "jest", "mocha", "dotenv", "cross-env", "vue", "next", "tslib", "rxjs",
	"classnames", "prop-types", "minimist", "glob", "rimraf", "mkdirp", "semver", "async",
	"bluebird", "underscore", "jquery", "colors", "inquirer", "ora", "node-fetch", "ws",
	"socket.io", "body-parser", "cors", "mongoose", "pg", "mysql", "mysql2", "redis",
	"sqlite3", "sequelize", "knex", "jsonwebtoken", "bcrypt", "bcryptjs", "nodemon", "pm2",
	"electron", "puppeteer", "playwright", "cheerio", "marked", "yaml", "js-yaml", "ajv",
	"zod", "date-fns", "dayjs", "luxon", "fs-extra", "execa", "shelljs", "got", "superagent",
	"form-data", "qs", "path-to-regexp", "coffee-script", "gulp", "grunt", "vite", "esbuild",
	"rollup", "openai", "@anthropic-ai/sdk", "@modelcontextprotocol/sdk", NULL,
};

struct deps {
	const char *path, *text;
	size_t len;
	int code; /* a script or a manifest (else prose: typo-squats and indexes only) */
	deps_add add;
	void *ctx;
	size_t packages, pinned; /* of a requirements file or package.json */
};

/* A name on the list, or the popular name it is within reach of ("" none). */
static const char *squatted(const char *name, const char *const *list, int *exact)
{
	size_t len = strlen(name);

	*exact = 0;
	for (size_t i = 0; list[i]; i++)
		if (strcasecmp(name, list[i]) == 0) {
			*exact = 1;
			return NULL;
		}
	if (len < 4)
		return NULL;
	for (size_t i = 0; list[i]; i++) {
		size_t d = jload_distance(name, list[i]);

		if (d == 1 || (d == 2 && len >= 6 && strlen(list[i]) >= 6))
			return list[i];
	}
	return NULL;
}

static int report_name(struct deps *d, const char *name, size_t at, int is_npm, int pinned)
{
	char note[TOKEN_MAX + 64];
	int exact;
	const char *near = squatted(name, is_npm ? npm : pypi, &exact);

	d->packages++;
	d->pinned += pinned != 0;
	if (near) {
		snprintf(note, sizeof(note), "%s, not %s", name, near);
		return d->add(d->ctx, "dependencies/typosquat", at, strlen(name), note);
	}
	if (!pinned && d->code) {
		snprintf(note, sizeof(note), "%s", name);
		return d->add(d->ctx, "dependencies/unpinned", at, strlen(name), note);
	}
	return 0;
}

/* An index or registry URL: the public one, or not. */
static int public_index(const char *url)
{
	return strstr(url, "://pypi.org/") || strstr(url, "://files.pythonhosted.org/") ||
	       strstr(url, "://registry.npmjs.org") || strstr(url, "://registry.yarnpkg.com");
}

/* A folder or file of the machine (a wheelhouse, a local mirror): not an
 * index on the network. */
static int local_path(const char *tok)
{
	return tok[0] == '/' || tok[0] == '.' || tok[0] == '~' || strncmp(tok, "file:", 5) == 0;
}

/* One package token of an install line (pip's "name[extra]==1.0", npm's
 * "@scope/name@1.0"). */
static int package(struct deps *d, const char *tok, size_t at, int is_npm)
{
	char name[TOKEN_MAX];
	size_t n;
	int pinned;

	if (strstr(tok, "://") || strncmp(tok, "git+", 4) == 0 || strncmp(tok, "github:", 7) == 0)
		return public_index(tok) ? 0
					  : d->add(d->ctx, "dependencies/untrusted-index", at,
						   strlen(tok), "a package from a URL");
	if (tok[0] == '.' || tok[0] == '/' || strchr(tok, '$'))
		return 0; /* a local path, or a variable: nothing to judge */
	if (is_npm) {
		const char *ver = strchr(tok + (tok[0] == '@'), '@');

		n = ver ? (size_t)(ver - tok) : strlen(tok);
		pinned = ver && ver[1] && strcmp(ver + 1, "latest") != 0 && strcmp(ver + 1, "*");
	} else {
		n = strcspn(tok, "[<>=!~;@ ");
		pinned = strstr(tok, "==") != NULL || strstr(tok, " @ ") != NULL;
	}
	if (n == 0 || n >= sizeof(name))
		return 0;
	memcpy(name, tok, n);
	name[n] = '\0';
	return report_name(d, name, at, is_npm, pinned);
}

/* The words of an install command after the verb, [at, end). */
static int install_args(struct deps *d, size_t at, size_t end, int is_npm)
{
	int skip_next = 0;

	while (at < end) {
		char tok[TOKEN_MAX];
		size_t from, n;

		while (at < end && isspace((unsigned char)d->text[at]))
			at++;
		from = at;
		while (at < end && !isspace((unsigned char)d->text[at]))
			at++;
		n = at - from;
		if (n == 0)
			break;
		/* a long token is judged by its head, not passed over: an index's
		 * URL made 200 bytes long is still that index */
		memcpy(tok, d->text + from, n < sizeof(tok) ? n : sizeof(tok) - 1);
		tok[n < sizeof(tok) ? n : sizeof(tok) - 1] = '\0';
		if (tok[0] == '"' || tok[0] == '\'') {
			memmove(tok, tok + 1, strlen(tok));
			tok[strcspn(tok, "\"'")] = '\0';
		}
		if (skip_next == 2 && !public_index(tok) && !local_path(tok) &&
		    d->add(d->ctx, "dependencies/untrusted-index", from, n, tok) < 0)
			return -1;
		if (skip_next) {
			skip_next = 0;
			continue;
		}
		if (strcmp(tok, "-i") == 0 || strcmp(tok, "--index-url") == 0 ||
		    strcmp(tok, "--extra-index-url") == 0 || strcmp(tok, "--registry") == 0 ||
		    strcmp(tok, "-f") == 0 || strcmp(tok, "--find-links") == 0) {
			skip_next = 2;
			continue;
		}
		if (strncmp(tok, "--index-url=", 12) == 0 || strncmp(tok, "--registry=", 11) == 0 ||
		    strncmp(tok, "--extra-index-url=", 18) == 0) {
			if (!public_index(tok) &&
			    d->add(d->ctx, "dependencies/untrusted-index", from, n, tok) < 0)
				return -1;
			continue;
		}
		if (strcmp(tok, "-r") == 0 || strcmp(tok, "-c") == 0 || strcmp(tok, "-e") == 0 ||
		    strcmp(tok, "--requirement") == 0 || strcmp(tok, "--target") == 0 ||
		    strcmp(tok, "-t") == 0 || strcmp(tok, "--prefix") == 0) {
			skip_next = 1;
			continue;
		}
		if (tok[0] == '-' || strchr(tok, '<') || strchr(tok, '>'))
			continue;
		if (package(d, tok, from, is_npm) < 0)
			return -1;
	}
	return 0;
}

/* "pip install", "pip3 install", "python -m pip install", "npm install",
 * "npm i", "yarn add", "pnpm add" on the line [at, end). */
static int install_line(struct deps *d, size_t at, size_t end)
{
	static const struct {
		const char *verb;
		int npm;
	} verbs[] = {
		{ "pip install ", 0 },	{ "pip3 install ", 0 }, { "-m pip install ", 0 },
		{ "uv pip install ", 0 }, { "npm install ", 1 }, { "npm i ", 1 },
		{ "npm add ", 1 },	{ "yarn add ", 1 },	{ "pnpm add ", 1 },
		{ "pnpm install ", 1 },
	};

	/* every verb has one of these: most lines are passed over at once */
	if (!memmem(d->text + at, end - at, "install ", 8) &&
	    !memmem(d->text + at, end - at, " i ", 3) && !memmem(d->text + at, end - at, "add ", 4))
		return 0;
	/* every command of the line, in its order: "pip install ok==1 &&
	 * pip install reqeusts" is two */
	for (size_t i = at; i < end;) {
		size_t v, vl = 0, stop;

		for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
			vl = strlen(verbs[v].verb);
			if (i + vl <= end && strncmp(d->text + i, verbs[v].verb, vl) == 0 &&
			    !(i > at && isalnum((unsigned char)d->text[i - 1])))
				break;
		}
		if (v == sizeof(verbs) / sizeof(verbs[0])) {
			i++;
			continue;
		}
		/* the command ends at a separator or a comment */
		for (stop = i + vl; stop < end && !strchr(";&|#`)\n", d->text[stop]); stop++) {
		}
		if (install_args(d, i + vl, stop, verbs[v].npm) < 0)
			return -1;
		i = stop;
	}
	return 0;
}

/* requirements.txt: a package a line, options, comments. */
static int requirements_line(struct deps *d, size_t at, size_t end)
{
	while (at < end && isspace((unsigned char)d->text[at]))
		at++;
	if (at == end || d->text[at] == '#')
		return 0;
	if (d->text[at] == '-')
		return install_args(d, at, end, 0);
	{
		char tok[TOKEN_MAX];
		size_t n = end - at;

		while (n && isspace((unsigned char)d->text[at + n - 1]))
			n--;
		if (n == 0)
			return 0;
		if (n >= sizeof(tok))
			n = sizeof(tok) - 1; /* its head: "name @ https://host/..." */
		memcpy(tok, d->text + at, n);
		tok[n] = '\0';
		tok[strcspn(tok, "#")] = '\0';
		return package(d, tok, at, 0);
	}
}

static int base_is(const char *path, const char *prefix)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return strncmp(base, prefix, strlen(prefix)) == 0;
}

/* Where name is next quoted in the text from *from on, for a finding's
 * line; *from moved past it. An object's keys come in the file's order
 * (jansson keeps it), so a list's names are found in one pass, not one
 * pass each: a package.json of 400,000 names is not read 400,000 times.
 * 0 when not found (a name written with escapes). */
static size_t quoted_at(const struct deps *d, const char *name, size_t *from)
{
	size_t n = strlen(name);

	for (size_t i = *from; i + n + 2 <= d->len; i++) {
		const char *q = memchr(d->text + i, '"', d->len - i);

		if (!q)
			break;
		i = (size_t)(q - d->text);
		if (i + n + 2 <= d->len && !memcmp(d->text + i + 1, name, n) &&
		    d->text[i + n + 1] == '"') {
			*from = i + n + 2;
			return i + 1;
		}
	}
	return 0;
}

/* package.json: its dependencies' versions and sources, its install scripts. */
static int package_json(struct deps *d)
{
	static const char *const lists[] = { "dependencies", "devDependencies",
					     "optionalDependencies", "peerDependencies" };
	static const char *const hooks[] = { "preinstall", "install", "postinstall" };
	json_t *doc = json_loadb(d->text, d->len, 0, NULL), *scripts;
	int rc = 0;

	if (!json_is_object(doc)) {
		json_decref(doc);
		return 0; /* not JSON: nothing to say of it here */
	}
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]) && rc == 0; l++) {
		const char *name;
		json_t *v;
		size_t from = 0;

		json_object_foreach(json_object_get(doc, lists[l]), name, v) {
			const char *ver = json_string_value(v);
			char tok[TOKEN_MAX];
			size_t at = quoted_at(d, name, &from);

			if (!ver)
				continue;
			if (strstr(ver, "://") || !strncmp(ver, "git+", 4) || !strncmp(ver, "github:", 7)) {
				d->packages++;
				rc = public_index(ver) ? 0
						       : d->add(d->ctx, "dependencies/untrusted-index", at,
								strlen(name), "a package from a URL");
			} else if (!strncmp(ver, "file:", 5) || !strncmp(ver, "link:", 5) ||
				   strlen(name) + strlen(ver) + 2 > sizeof(tok)) {
				continue;
			} else {
				int n = snprintf(tok, sizeof(tok), "%s@%s", name,
						 strcmp(ver, "*") && strcmp(ver, "latest") &&
								 strcmp(ver, "x")
							 ? ver
							 : "");

				if (n > 0 && (size_t)n < sizeof(tok))
					rc = package(d, tok, at, 1);
			}
			if (rc < 0)
				break;
		}
	}
	scripts = json_object_get(doc, "scripts");
	for (size_t h = 0; h < sizeof(hooks) / sizeof(hooks[0]) && rc == 0; h++) {
		size_t from = 0;

		if (json_is_string(json_object_get(scripts, hooks[h])))
			rc = d->add(d->ctx, "dependencies/install-script",
				    quoted_at(d, hooks[h], &from), strlen(hooks[h]), hooks[h]);
	}
	json_decref(doc);
	return rc;
}

int deps_scan(const char *path, const char *text, size_t len, int code, deps_add add, void *ctx)
{
	struct deps d = { .path = path, .text = text, .len = len, .code = code, .add = add,
			  .ctx = ctx };
	int reqs = base_is(path, "requirements") || base_is(path, "constraints");
	const char *dot = strrchr(path, '.');
	size_t at = 0;

	if (base_is(path, "package.json") && !strcmp(strrchr(path, '/') ? strrchr(path, '/') + 1 : path,
						     "package.json")) {
		if (package_json(&d) < 0)
			return -1;
		goto whole;
	}
	/* pip-tools' input, unpinned by design: pip-compile pins it in the .txt */
	if (reqs && dot && !strcmp(dot, ".in"))
		d.code = 0;
	while (at < len) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) : len;

		if ((reqs ? requirements_line(&d, at, end) : install_line(&d, at, end)) < 0)
			return -1;
		at = end + 1;
	}
	if (!reqs)
		return 0;
whole:
	/* a whole list of packages none of which is pinned */
	if (d.code && d.packages >= 2 && d.pinned == 0)
		return add(ctx, "dependencies/nothing-pinned", 0, 1, "no package has a version");
	return 0;
}
