/*
 * A signed folder checked against the trust store (include/toolgate/skill.h,
 * docs/SKILLS.md, "Signatures").
 *
 * The order is the one that reads the least untrusted text: the
 * signature's key id first (to pick the key), then the key's standing,
 * then the signature over the manifest's bytes, and only a manifest so
 * verified is parsed and compared with the files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/skill.h"

#define MANIFEST_READ_MAX ((size_t)TG_SKILL_FILES_MAX * (64 + 2 + TG_SKILL_PATH_MAX + 1))

/* name's text in the folder open at dfd (dir in messages), at most max
 * bytes, into *text: 0; 1 when there is no such file; -1 and err. Never
 * through a link: the manifest and its signature are the folder's own, as
 * its other files are, and from the folder that was walked (dfd), not
 * whatever dir names now. */
static int read_part(int dfd, const char *dir, const char *name, size_t max, char **text,
		     size_t *len, struct tg_error *err)
{
	struct stat st;
	size_t got = 0;
	int fd;

	*text = NULL;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0 && errno == ELOOP)
		return tg_error_set(err, TG_ERR_INVALID, "%s/%s: a link: it must be a file", dir,
				    name);
	if (fd < 0)
		return tg_error_sys(err, errno, "%s/%s", dir, name);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return tg_error_sys(err, errno, "%s/%s", dir, name);
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
		close(fd);
		return tg_error_set(err, TG_ERR_INVALID, "%s/%s: %s", dir, name,
				    S_ISREG(st.st_mode) ? "over its ceiling" : "not a regular file");
	}
	*text = malloc((size_t)st.st_size + 1);
	while (*text && got <= (size_t)st.st_size) {
		ssize_t n = read(fd, *text + got, (size_t)st.st_size + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (!*text)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (got != (size_t)st.st_size) {
		free(*text);
		*text = NULL;
		return tg_error_set(err, TG_ERR_INVALID, "%s/%s: changed while read", dir, name);
	}
	(*text)[got] = '\0';
	*len = got;
	return 0;
}

static void date(time_t t, char out[16])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 16, "%Y-%m-%d", &tm);
}

/* The key that signed sig, from trust, in good standing at now. */
static enum tg_verdict pick_key(const struct tg_skill *s, const char *sig, size_t sig_len,
				const struct tg_trust *trust, time_t now,
				const struct tg_trust_key **out, struct tg_error *err)
{
	unsigned char id[TG_SIGN_KEYID_LEN];
	const struct tg_trust_key *k;
	char hex[17], when[16];

	if (tg_sign_sig_keyid(sig, sig_len, id, err) < 0) {
		tg_error_wrap(err, "%s/%s", s->dir, TG_SKILL_SIGNATURE);
		return TG_VERDICT_MALFORMED;
	}
	tg_sign_keyid_hex(id, hex);
	k = tg_trust_find(trust, id);
	if (!k) {
		tg_error_set(err, TG_ERR_FORBIDDEN,
			     "%s: signed by key %s, which is not among the keys trusted", s->dir,
			     hex);
		return TG_VERDICT_UNTRUSTED;
	}
	/* whatever the date: a key stolen signs with any timestamp it likes */
	if (k->revoked) {
		date(k->revoked, when);
		tg_error_set(err, TG_ERR_FORBIDDEN, "%s: signed by %s's key %s, revoked on %s%s%s",
			     s->dir, k->publisher, hex, when, k->reason ? ": " : "",
			     k->reason ? k->reason : "");
		return TG_VERDICT_UNTRUSTED;
	}
	if (k->expires && k->expires <= now) {
		date(k->expires, when);
		tg_error_set(err, TG_ERR_FORBIDDEN, "%s: signed by %s's key %s, which expired on %s",
			     s->dir, k->publisher, hex, when);
		return TG_VERDICT_UNTRUSTED;
	}
	*out = k;
	return TG_VERDICT_OK;
}

enum tg_verdict tg_skill_verify(const struct tg_skill *skill, const struct tg_trust *trust,
				time_t now, char *publisher, size_t len, struct tg_error *err)
{
	char *manifest = NULL, *sig = NULL;
	size_t mlen, slen;
	const struct tg_trust_key *k = NULL;
	enum tg_verdict v = TG_VERDICT_MALFORMED;
	int rc, dfd;

	if (publisher && len)
		publisher[0] = '\0';
	dfd = tg_skill_dir_open(skill, err);
	if (dfd < 0)
		return TG_VERDICT_MALFORMED;
	rc = read_part(dfd, skill->dir, TG_SKILL_MANIFEST, MANIFEST_READ_MAX, &manifest, &mlen,
		       err);
	if (rc == 0)
		rc = read_part(dfd, skill->dir, TG_SKILL_SIGNATURE, TG_SIGN_FILE_MAX, &sig, &slen,
			       err);
	close(dfd);
	if (rc == 1) {
		tg_error_set(err, TG_ERR_FORBIDDEN, "%s: not signed (no %s%s)", skill->dir,
			     manifest ? "" : TG_SKILL_MANIFEST " and no ", TG_SKILL_SIGNATURE);
		v = TG_VERDICT_UNSIGNED;
		goto out;
	}
	if (rc < 0)
		goto out;
	v = pick_key(skill, sig, slen, trust, now, &k, err);
	if (v != TG_VERDICT_OK)
		goto out;
	/* a legacy signature is over the manifest itself, its algorithm
	 * bytes unsigned: with them flipped a prehashed signature verifies
	 * as legacy over the 64-byte hash. Only "ED", as minisign -V -H. */
	if (tg_sign_sig_prehashed(sig, slen) != 1) {
		tg_error_set(err, TG_ERR_INVALID,
			     "%s/%s: a legacy signature (minisign -S -l): a skill's must be "
			     "prehashed; sign it again without -l",
			     skill->dir, TG_SKILL_SIGNATURE);
		v = TG_VERDICT_MALFORMED;
		goto out;
	}
	if (tg_sign_verify(&k->key, manifest, mlen, sig, slen, NULL, 0, err) < 0) {
		tg_error_wrap(err, "%s/%s", skill->dir, TG_SKILL_SIGNATURE);
		v = err && err->code == TG_ERR_LIMIT ? TG_VERDICT_MALFORMED : TG_VERDICT_TAMPERED;
		goto out;
	}
	/* signed by a trusted key yet not a manifest: malformed, not changed */
	{
		struct tg_skill_entry *e;
		size_t n;

		if (tg_skill_manifest_parse(manifest, mlen, &e, &n, err) < 0) {
			tg_error_wrap(err, "%s/%s", skill->dir, TG_SKILL_MANIFEST);
			v = TG_VERDICT_MALFORMED;
			goto out;
		}
		tg_skill_entries_free(e, n);
	}
	if (tg_skill_manifest_check(skill, manifest, mlen, err) < 0) {
		v = err && err->code == TG_ERR_NOMEM ? TG_VERDICT_MALFORMED : TG_VERDICT_TAMPERED;
		goto out;
	}
	/* named only now: a key id is the signer's claim until its signature
	 * verifies, so a tampered folder is attributed to no one */
	if (publisher && len)
		snprintf(publisher, len, "%s", k->publisher);
	v = TG_VERDICT_OK;
out:
	free(manifest);
	free(sig);
	return v;
}
