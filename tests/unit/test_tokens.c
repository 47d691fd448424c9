/*
 * Unit tests: the --tokens file of the Streamable HTTP transport
 * (src/mcp/auth.c, docs/MCP.md "Bearer tokens"): each line a token's
 * SHA-256 and the principal it stands for.
 */
#include <stdio.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "unit.h"

/* sha256("test") and sha256("other") */
#define H_TEST "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define H_OTHER "d9298a10d1b0735837dc4bd85dac641b0f3cef27a47e5d53a54f2f3f5b2fcffa"

static int load(const char *dir, const char *text, struct mcp_tokens **t, struct tg_error *err)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tokens", dir);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0)
		return -2;
	return mcp_tokens_load(path, t, err);
}

/* a token stands for one principal: a hash listed twice is refused with
 * the file and both lines, whoever the second names (the last won) */
static int duplicate_hash(void)
{
	char dir[64];
	struct mcp_tokens *t = NULL;
	struct tg_error err;

	CHECK(unit_tmpdir(dir, "tokens") == 0);
	CHECK(load(dir, "# hash principal\n" H_TEST " alice\n" H_OTHER " bob\n", &t, &err) == 0);
	CHECK(t && strcmp(mcp_tokens_check(t, "test", 4), "alice") == 0);
	CHECK(strcmp(mcp_tokens_check(t, "other", 5), "bob") == 0);
	CHECK(mcp_tokens_check(t, "nope", 4) == NULL);
	mcp_tokens_free(t);
	t = NULL;
	CHECK(load(dir, H_TEST " alice\n\n" H_OTHER " bob\n" H_TEST " mallory\n", &t, &err) < 0);
	CHECK(t == NULL);
	CHECK(strstr(err.msg, "/tokens: line 4: ") && strstr(err.msg, "line 1") &&
	      strstr(err.msg, "mallory") && strstr(err.msg, "alice"));
	/* the same principal twice is a repeat too: the hash in upper case */
	CHECK(load(dir, H_TEST " alice\n9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08 "
		   "alice\n", &t, &err) < 0 && strstr(err.msg, "line 2: "));
	unit_rmtree(dir);
	return 0;
}

const struct unit_test tokens_tests[] = {
	{ "tokens/duplicate_hash", duplicate_hash },
	UNIT_TESTS_END,
};
