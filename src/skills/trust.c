/*
 * The trust store: the publishers' keys an operator trusts to sign skills
 * and catalogues (include/toolgate/skill.h, docs/SKILLS.md, "Trust
 * store"), and the check of a signed folder against it.
 *
 * The store is a JSON file of publishers, each with a minisign public key
 * (the line `minisign -P` takes), an optional expiry and, once revoked,
 * the date and why. A revoked key stays in the store, so that what it
 * signed is refused as revoked by name rather than as unknown.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toolgate/skill.h"
#include "util/file.h"
#include "util/jload.h"

#define TRUST_MAX (1u << 20)
#define TRUST_KEYS_MAX 1024
#define PUBLISHER_MAX 128
#define REASON_MAX 512

static const char *const top_fields[] = { "publishers", NULL };
static const char *const key_fields[] = { "name", "key", "expires", "revoked", "reason", NULL };

int tg_trust_date(const char *s, time_t *t)
{
	struct tm tm, want, back;
	const char *end;

	memset(&tm, 0, sizeof(tm));
	if (strlen(s) < 10 || s[4] != '-' || s[7] != '-')
		return -1;
	end = strptime(s, "%Y-%m-%d", &tm);
	if (end && *end == 'T')
		end = strptime(end, "T%H:%M:%SZ", &tm);
	if (!end || *end)
		return -1;
	/* a year toolgate can write back as it read it (strftime pads no
	 * year before 1000), and a date a key could have */
	if (tm.tm_year + 1900 < 1970 || tm.tm_year + 1900 > 9999)
		return -1;
	want = tm; /* timegm normalises what it is given */
	*t = timegm(&tm);
	/* a day that is not in its month (2027-02-30) comes back as another */
	if (*t == (time_t)-1 || !gmtime_r(t, &back) || back.tm_mday != want.tm_mday ||
	    back.tm_mon != want.tm_mon || back.tm_hour != want.tm_hour)
		return -1;
	return 0;
}

static void format_date(time_t t, char out[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int date_field(const struct jload *l, json_t *k, const char *key, const char *where,
		      time_t *out)
{
	json_t *v = json_object_get(k, key);
	char field[80];

	*out = 0;
	if (!v)
		return 0;
	snprintf(field, sizeof(field), "%s.%s", where, key);
	if (!json_is_string(v) || tg_trust_date(json_string_value(v), out) < 0)
		return jload_bad(l, field, "a date, 2027-06-30 or 2027-06-30T12:00:00Z");
	return 0;
}

static int load_key(const struct jload *l, json_t *k, size_t i, struct tg_trust_key *out)
{
	char where[48], field[80];
	char *key = NULL;
	struct tg_error e;
	int rc;

	snprintf(where, sizeof(where), "publishers[%zu]", i);
	if (!json_is_object(k))
		return jload_bad(l, where, "must be an object");
	if (jload_only(l, k, where, key_fields) < 0)
		return -1;
	snprintf(field, sizeof(field), "%s.name", where);
	if (jload_string(l, json_object_get(k, "name"), field, PUBLISHER_MAX, &out->publisher) < 0)
		return -1;
	snprintf(field, sizeof(field), "%s.key", where);
	if (jload_string(l, json_object_get(k, "key"), field, TG_SIGN_FILE_MAX, &key) < 0)
		return -1;
	rc = tg_sign_pub_parse(key, strlen(key), &out->key, &e);
	free(key);
	if (rc < 0)
		return jload_bad(l, field, "%s", e.msg);
	if (date_field(l, k, "expires", where, &out->expires) < 0 ||
	    date_field(l, k, "revoked", where, &out->revoked) < 0)
		return -1;
	snprintf(field, sizeof(field), "%s.reason", where);
	if (json_object_get(k, "reason") &&
	    jload_string(l, json_object_get(k, "reason"), field, REASON_MAX, &out->reason) < 0)
		return -1;
	return 0;
}

int tg_trust_parse(const char *text, size_t len, const char *origin, struct tg_trust **out,
		   struct tg_error *err)
{
	struct jload l = { .kind = "trust store", .origin = origin, .err = err };
	struct tg_trust *t = NULL;
	json_error_t je;
	json_t *doc, *keys;
	int rc = -1;

	*out = NULL;
	if (len > TRUST_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "trust store %s: %zu bytes, at most %u",
				    origin, len, TRUST_MAX);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!doc)
		return tg_error_set(err, TG_ERR_INVALID, "trust store %s: line %d: %s", origin,
				    je.line, je.text);
	if (!json_is_object(doc)) {
		jload_bad(&l, "(top)", "must be an object");
		goto out;
	}
	if (jload_only(&l, doc, "", top_fields) < 0)
		goto out;
	keys = json_object_get(doc, "publishers");
	if (!json_is_array(keys)) {
		jload_bad(&l, "publishers", "must be an array");
		goto out;
	}
	if (json_array_size(keys) > TRUST_KEYS_MAX) {
		tg_error_set(err, TG_ERR_LIMIT, "trust store %s: over %d publishers' keys", origin,
			     TRUST_KEYS_MAX);
		goto out;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->keys = calloc(json_array_size(keys) + 1, sizeof(*t->keys)))) {
		jload_nomem(&l);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(keys); i++) {
		t->n = i + 1;
		if (load_key(&l, json_array_get(keys, i), i, &t->keys[i]) < 0)
			goto out;
		for (size_t j = 0; j < i; j++)
			if (memcmp(t->keys[j].key.id, t->keys[i].key.id, TG_SIGN_KEYID_LEN) == 0) {
				char hex[17];

				tg_sign_keyid_hex(t->keys[i].key.id, hex);
				tg_error_set(err, TG_ERR_INVALID,
					     "trust store %s: publishers[%zu]: key %s is "
					     "publishers[%zu]'s too",
					     origin, i, hex, j);
				goto out;
			}
	}
	*out = t;
	t = NULL;
	rc = 0;
out:
	tg_trust_free(t);
	json_decref(doc);
	return rc;
}

int tg_trust_load(const char *path, struct tg_trust **out, struct tg_error *err)
{
	size_t len;
	char *text = file_read_all(path, TRUST_MAX, 1, &len);
	int rc;

	*out = NULL;
	if (!text && errno == EFBIG)
		return tg_error_set(err, TG_ERR_LIMIT, "trust store %s: over %u bytes", path,
				    TRUST_MAX);
	if (!text)
		return tg_error_sys(err, errno, "trust store %s", path);
	rc = tg_trust_parse(text, len, path, out, err);
	free(text);
	return rc;
}

void tg_trust_free(struct tg_trust *trust)
{
	if (!trust)
		return;
	for (size_t i = 0; i < trust->n; i++) {
		free(trust->keys[i].publisher);
		free(trust->keys[i].reason);
	}
	free(trust->keys);
	free(trust);
}

const struct tg_trust_key *tg_trust_find(const struct tg_trust *trust,
					 const unsigned char id[TG_SIGN_KEYID_LEN])
{
	for (size_t i = 0; trust && i < trust->n; i++)
		if (memcmp(trust->keys[i].key.id, id, TG_SIGN_KEYID_LEN) == 0)
			return &trust->keys[i];
	return NULL;
}

char *tg_trust_format(const struct tg_trust *trust)
{
	json_t *doc = json_object(), *keys = json_array();
	char *text = NULL;

	if (!doc || !keys || json_object_set(doc, "publishers", keys) < 0)
		goto out;
	for (size_t i = 0; i < trust->n; i++) {
		const struct tg_trust_key *k = &trust->keys[i];
		char *pub = tg_sign_pub_format(&k->key), *line, date[32];
		json_t *o = json_object();

		/* the key's line, without the untrusted comment */
		line = pub ? strchr(pub, '\n') : NULL;
		if (!o || !line || json_array_append_new(keys, o) < 0) {
			json_decref(o);
			free(pub);
			goto out;
		}
		line[strcspn(line + 1, "\n") + 1] = '\0';
		json_object_set_new(o, "name", json_string(k->publisher));
		json_object_set_new(o, "key", json_string(line + 1));
		free(pub);
		if (k->expires) {
			format_date(k->expires, date);
			json_object_set_new(o, "expires", json_string(date));
		}
		if (k->revoked) {
			format_date(k->revoked, date);
			json_object_set_new(o, "revoked", json_string(date));
		}
		if (k->reason)
			json_object_set_new(o, "reason", json_string(k->reason));
	}
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
out:
	json_decref(keys);
	json_decref(doc);
	return text;
}

const char *tg_verdict_name(enum tg_verdict verdict)
{
	switch (verdict) {
	case TG_VERDICT_OK:
		return "ok";
	case TG_VERDICT_UNSIGNED:
		return "unsigned";
	case TG_VERDICT_UNTRUSTED:
		return "untrusted";
	case TG_VERDICT_TAMPERED:
		return "tampered";
	case TG_VERDICT_MALFORMED:
		return "malformed";
	}
	return "malformed";
}
