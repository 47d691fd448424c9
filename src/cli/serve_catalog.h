/* The catalogue serve --catalog-trust serves (src/cli/serve_catalog.c,
 * docs/SKILLS.md, "Signed catalogues"): verified, then loaded and run from
 * a copy of the bytes verified. */
#ifndef TG_CLI_SERVE_CATALOG_H
#define TG_CLI_SERVE_CATALOG_H

#include <limits.h>
#include <stddef.h>

#include "toolgate/catalog.h"
#include "toolgate/error.h"

/* serve's copies of a signed catalogue: in root (made at the first load,
 * written by serve alone), live the one served (the tools' relative mounts are its files),
 * next the one a load wrote. All "" until then. */
struct catalog_copy {
	char root[PATH_MAX];
	char live[PATH_MAX + 8];
	char next[PATH_MAX + 8];
};

/* The catalogue in dir loaded, and with trust (--catalog-trust: NULL for
 * none) only when its folder is signed by a key of the store and its
 * files are those signed, loaded from those bytes written to copy->next
 * (catalog_commit serves them). 0 and *out; or -1, err, and in reason why
 * it was refused ("" when it did not load). */
int catalog_load(const char *dir, const char *trust, struct catalog_copy *copy,
		 struct tg_catalog **out, char *reason, size_t len, struct tg_error *err);
/* copy->next, as the last catalog_load wrote it, served at copy->live
 * (the one served before moved to next, kept until the next load: calls
 * in flight may still read it). 0, or -1 and err. Again: undone. */
int catalog_commit(struct catalog_copy *copy, struct tg_error *err);
/* For a command that runs the catalogue's code once (rollback, upstream
 * test|pin|diff): catalog_load then catalog_commit, the tools' relative
 * mounts then copy->live's (tg_gate_options.tools_copy). 0 and *out, or
 * -1 and err (naming --catalog-trust's refusal). */
int catalog_open(const char *dir, const char *trust, struct catalog_copy *copy,
		 struct tg_catalog **out, struct tg_error *err);
/* The catalogue's own skills (docs/SKILLS.md, "Serving"): when the
 * operator named no skills folder (*skills NULL), *skills set to its
 * skills/, in out[len] (from the verified copy live when given,
 * --catalog-trust, else dir's own), and *optional: the gate serves none
 * while it is missing or not a folder (a link), at start or at a reload
 * (a reload may add or remove it). 0. */
int catalog_skills(const char *dir, const char *live, const char **skills, int *optional,
		   char *out, size_t len);
/* The copies removed (at exit). */
void catalog_copy_remove(struct catalog_copy *copy);

/* serve --redact-gitleaks (src/cli/serve_redact.c): the rules of path (a
 * gitleaks configuration; NULL: none) in use for every redaction, their
 * notes logged unless quiet. 0, or -1 and err. */
int serve_redact_load(const char *path, int quiet, struct tg_error *err);
/* The same on SIGHUP: a file that does not load is logged and recorded
 * in gate's audit log, and the rules in use stay. */
struct tg_gate;
void serve_redact_reload(const char *path, struct tg_gate *gate);

#endif
