/*
 * The catalogue serve --catalog-trust serves (serve_catalog.h,
 * docs/SKILLS.md, "Signed catalogues"): its folder read and verified as a
 * skill's is (tg_folder_load, tg_skill_verify), then the bytes verified
 * written into a folder of serve's own (mkdtemp, then 0755: no one else
 * writes there; the sandbox's user reads the tools' mounts), the catalogue
 * loaded from there and the tools' relative mounts (a script the
 * catalogue carries) given from there. Loaded or run from DIR itself, a
 * file swapped after the verification read it (and back before any second
 * look) would be loaded unverified, and a script changed after start would
 * run unsigned at every call.
 *
 * The copy served is ROOT/live; a reload writes ROOT/next and exchanges
 * the two (renameat2 RENAME_EXCHANGE): the path the gate mounts from stays
 * the same, a call in flight keeps the files it was given until the next
 * reload removes them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/serve_catalog.h"
#include "toolgate/skill.h"
#include "util/file.h"

/* copy's root made (once) and its next emptied: 0, or -1 and err. */
static int copy_ready(struct catalog_copy *c, struct tg_error *err)
{
	if (!c->root[0]) {
		if (file_temp_dir("toolgate-catalog", c->root, sizeof(c->root)) < 0)
			return tg_error_sys(err, errno, "a folder for the catalogue's copy");
		snprintf(c->live, sizeof(c->live), "%s/live", c->root);
		snprintf(c->next, sizeof(c->next), "%s/next", c->root);
	}
	if (file_remove_tree(c->next) < 0 && errno != ENOENT)
		return tg_error_sys(err, errno, "%s", c->next);
	return 0;
}

/* err's message with the copy's path said as the folder's. */
static void named(struct tg_error *err, const char *copy, const char *dir)
{
	char msg[sizeof(err->msg)], *at;
	size_t cl = strlen(copy), n = 0;
	const char *from = err->msg;

	while ((at = strstr(from, copy)) && n < sizeof(msg)) {
		n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%.*s%s", (int)(at - from), from,
				      dir);
		from = at + cl;
	}
	if (n < sizeof(msg))
		snprintf(msg + n, sizeof(msg) - n, "%s", from);
	memcpy(err->msg, msg, sizeof(msg));
}

int catalog_load(const char *dir, const char *trust, struct catalog_copy *copy,
		 struct tg_catalog **out, char *reason, size_t len, struct tg_error *err)
{
	struct tg_skill *folder = NULL;
	struct tg_trust *t = NULL;
	enum tg_verdict v;
	int rc = -1;

	*out = NULL;
	reason[0] = '\0';
	if (!trust)
		return tg_catalog_load_dir(dir, NULL, out, err);
	if (tg_trust_load(trust, &t, err) < 0)
		return tg_error_wrap(err, "--catalog-trust");
	if (tg_folder_load(dir, &folder, err) < 0) {
		snprintf(reason, len, "malformed");
		goto out;
	}
	v = tg_skill_verify(folder, t, time(NULL), NULL, 0, err);
	if (v != TG_VERDICT_OK) {
		snprintf(reason, len, "%s", tg_verdict_name(v));
		tg_error_wrap(err, "the catalogue is not signed as --catalog-trust asks");
		goto out;
	}
	if (copy_ready(copy, err) < 0 || tg_skill_write(folder, copy->next, 0, err) < 0) {
		tg_error_wrap(err, "%s: the catalogue's copy", dir);
		goto out;
	}
	if (tg_catalog_load_dir(copy->next, NULL, out, err) < 0) {
		named(err, copy->next, dir);
		goto out;
	}
	if (tg_catalog_rebase(*out, copy->next, dir) < 0) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		tg_catalog_free(*out);
		*out = NULL;
		goto out;
	}
	rc = 0;
out:
	tg_skill_free(folder);
	tg_trust_free(t);
	return rc;
}

int catalog_commit(struct catalog_copy *c, struct tg_error *err)
{
	struct stat st;

	if (lstat(c->live, &st) < 0 && errno == ENOENT) {
		if (rename(c->next, c->live) < 0)
			return tg_error_sys(err, errno, "%s", c->live);
		return 0;
	}
	if (renameat2(AT_FDCWD, c->next, AT_FDCWD, c->live, RENAME_EXCHANGE) < 0)
		return tg_error_sys(err, errno, "%s", c->live);
	return 0;
}

int catalog_open(const char *dir, const char *trust, struct catalog_copy *copy,
		 struct tg_catalog **out, struct tg_error *err)
{
	char reason[32];

	if (catalog_load(dir, trust, copy, out, reason, sizeof(reason), err) < 0)
		return -1;
	if (trust && catalog_commit(copy, err) < 0) {
		tg_catalog_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

int catalog_skills(const char *dir, const char *live, const char **skills, int *optional,
		   char *out, size_t len)
{
	if (*skills)
		return 0;
	/* the copy's, once verified: its skills are signed twice, each by its
	 * publisher, and the whole by the catalogue's. Whether there is one is
	 * the gate's to look, in the folder it reads, at start and at each
	 * reload (an empty skills/ of DIR is no file the copy has) */
	if ((size_t)snprintf(out, len, "%s/skills", live ? live : dir) >= len)
		return 0;
	*skills = out;
	*optional = 1;
	return 0;
}

void catalog_copy_remove(struct catalog_copy *c)
{
	if (c->root[0])
		file_remove_tree(c->root);
}
