/*
 * The review tickets of upstreams' definitions (docs/UPSTREAMS.md,
 * "Pins"): what one holds (the definition, canonical, and the pin it was
 * judged against), what it shows its approver (what changed, and the
 * description scanner's findings), how it is found again, and how an
 * approved one is carried out (tg_gate_pin_accept), the one way the gate
 * and `toolgate upstream accept` pin an accepted definition.
 *
 * Never: pin anything but the definition the ticket holds, checked
 * against the hash it names; carry out a ticket judged against a pin that
 * is no longer the tool's (the approver saw a diff against that pin).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/gate_int.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/scan.h"
#include "toolgate/upstream.h"
#include "util/log.h"
#include "util/sodium.h"

#define SUFFIX "@definition"
#define SUFFIX_LEN 11

int gate_pin_ticket_of(const char *upstream, const char *exposed,
		       const struct tg_pin_definition *d, const char *against, struct tg_ticket *t)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	json_t *a;

	/* the definition as its canonical text, byte for byte what is
	 * pinned; against: the pin its diff was made against ("" none) */
	memset(t, 0, sizeof(*t));
	a = json_pack("{s:s,s:s,s:s,s:s,s:s}", "upstream", upstream, "tool", d->tool, "sha256",
		      d->sha256, "definition", d->canonical, "against", against ? against : "");
	t->arguments = a ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(a);
	if (!t->arguments)
		return -1;
	crypto_hash_sha256(h, (const unsigned char *)t->arguments, strlen(t->arguments));
	sodium_bin2hex(t->args_sha256, sizeof(t->args_sha256), h, sizeof(h));
	snprintf(t->principal, sizeof(t->principal), "upstream %s", upstream);
	snprintf(t->tool, sizeof(t->tool), "%s" SUFFIX, exposed);
	return 0;
}

/* The scanner's findings on k, as the preview shows them: a JSON array
 * [{rule, at, why}] (NULL out of memory); *n their count. */
static json_t *findings_of(const struct tg_contract *k, size_t *n)
{
	struct tg_scan_finding f[16];
	char line[400];
	json_t *v = json_array();
	size_t i;

	*n = tg_scan_contract(k, f, 16);
	for (i = 0; v && i < *n && i < 16; i++) {
		tg_scan_describe(&f[i], line, sizeof(line));
		if (json_array_append_new(v, json_pack("{s:s,s:s,s:s}", "rule", f[i].rule, "at",
						       f[i].where, "why", line)) < 0) {
			json_decref(v);
			return NULL;
		}
	}
	return v;
}

/* A canonical definition as JSON (null for none; its text if it does not
 * parse, which a canonical one always does). */
static json_t *definition_json(const char *text)
{
	json_t *j = text ? json_loads(text, 0, NULL) : json_null();

	return j ? j : json_string(text);
}

size_t gate_pin_findings(const struct tg_contract *k)
{
	struct tg_scan_finding f[1];

	return tg_scan_contract(k, f, 1);
}

int gate_pin_ticket_open(struct tg_gate *g, const struct tg_upstream *u,
			 const struct tg_contract *k, const struct tg_pin_definition *d,
			 const char *old, struct tg_ticket *t, char *id, struct tg_error *err)
{
	struct tg_ticket made;
	json_t *p, *findings;
	char *report = NULL;
	size_t nf;
	int breaking, rc;

	if (tg_catalog_upstream_diff(u, old, old ? strlen(old) : 0, d->canonical,
				     strlen(d->canonical), &report, &breaking, err) < 0)
		return -1;
	/* the scanner's findings are the preview's, not the ticket's own
	 * findings: those say a call's arguments are anomalous */
	findings = findings_of(k, &nf);
	/* and both definitions whole, for a person to lay side by side (the
	 * console does: docs/CONSOLE.md) */
	p = findings ? json_pack("{s:[{s:s,s:s}],s:b,s:{s:s,s:s,s:b,s:o,s:o,s:o}}", "content",
				 "type", "text", "text", report, "isError", 0, "structured",
				 "change", old ? "changed" : "added", "definition", d->sha256,
				 "breaking", breaking, "findings", findings, "old",
				 definition_json(old), "new", definition_json(d->canonical))
		     : NULL;
	free(report);
	t->preview = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	if (!t->preview)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	rc = tg_store_ticket_create(g->store, t, TG_STORE_NOW, gate_ticket_ttl(g, t->tool),
				    &made, err);
	free(t->preview);
	t->preview = NULL;
	if (rc < 0)
		return -1;
	snprintf(id, 33, "%s", made.id);
	tg_ticket_release(&made);
	return 0;
}

/* The definition ticket t holds (its arguments, hashed as the store keeps
 * them): 0 and OUT *d, its upstream in up, the pin it was judged against
 * in against ("" none); -1 and err. */
static int held_definition(const struct tg_ticket *t, struct tg_pin_definition *d, char *up,
			   size_t len, char *against, struct tg_error *err)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char hex[65], principal[128];
	const char *u, *tool, *sha, *def, *was;
	size_t n = strlen(t->tool);
	json_t *a;

	if (n < SUFFIX_LEN || strcmp(t->tool + n - SUFFIX_LEN, SUFFIX) != 0 || !t->arguments)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s is not an upstream definition's "
				    "(its tool is %s)", t->id, t->tool);
	crypto_hash_sha256(h, (const unsigned char *)t->arguments, strlen(t->arguments));
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	a = json_loads(t->arguments, 0, NULL);
	u = json_string_value(json_object_get(a, "upstream"));
	tool = json_string_value(json_object_get(a, "tool"));
	sha = json_string_value(json_object_get(a, "sha256"));
	def = json_string_value(json_object_get(a, "definition"));
	was = json_string_value(json_object_get(a, "against"));
	snprintf(principal, sizeof(principal), "upstream %s", u ? u : "");
	if (strcmp(hex, t->args_sha256) != 0 || !u || !tool || !sha || !def || !was ||
	    strcmp(principal, t->principal) != 0 || strlen(u) >= len || strlen(was) > 64) {
		json_decref(a);
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: its arguments are not the "
				    "definition it was opened for", t->id);
	}
	snprintf(up, len, "%s", u);
	snprintf(against, 65, "%s", was);
	if (tg_upstream_definition(def, strlen(def), d, err) < 0 || strcmp(d->sha256, sha) != 0 ||
	    strcmp(d->tool, tool) != 0 || strcmp(d->canonical, def) != 0) {
		tg_pin_definition_release(d);
		json_decref(a);
		return err->code == TG_ERR_NOMEM ? -1 : tg_error_set(err, TG_ERR_INVALID, "ticket %s: "
			"its definition does not hash to the one it names", t->id);
	}
	json_decref(a);
	return 0;
}

/* 0 if the tool's pin is still the one the ticket was judged against;
 * -1 and err. */
static int still_against(struct tg_store *st, const char *up, const struct tg_pin_definition *d,
			 const char *against, const char *id, struct tg_error *err)
{
	struct tg_pin p;
	int rc = tg_store_pin_get(st, up, d->tool, &p, err);

	if (rc < 0)
		return -1;
	if (rc == 0 ? strcmp(p.sha256, against) == 0 : !*against) {
		if (rc == 0)
			tg_pin_release(&p);
		return 0;
	}
	if (rc == 0)
		tg_pin_release(&p);
	return tg_error_set(err, TG_ERR_INVALID, "ticket %s: tool %s was pinned otherwise since "
			    "its definition was judged: the approval was for a change from a pin "
			    "that is no longer its own", id, d->tool);
}

int tg_gate_pin_accept(struct tg_store *st, struct tg_audit *audit, const char *id,
		       struct tg_error *err)
{
	struct tg_pin_definition d = { 0 };
	struct tg_pin p = { 0 };
	struct tg_ticket t;
	char up[33], against[65], subject[80], what[400];
	int rc = -1;

	tg_error_clear(err);
	if (tg_store_ticket_get(st, id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	if (held_definition(&t, &d, up, sizeof(up), against, err) < 0)
		goto out;
	if (t.state == TG_TICKET_EXECUTED) {
		rc = 1; /* carried out before */
		goto out;
	}
	if (t.state != TG_TICKET_APPROVED) {
		tg_error_set(err, TG_ERR_INVALID, "ticket %s is %s: only an approved one is "
			     "accepted", id, tg_ticket_state_name(t.state));
		goto out;
	}
	if (still_against(st, up, &d, against, id, err) < 0)
		goto out;
	snprintf(p.upstream, sizeof(p.upstream), "%s", up);
	snprintf(p.tool, sizeof(p.tool), "%s", d.tool);
	snprintf(p.sha256, sizeof(p.sha256), "%s", d.sha256);
	snprintf(p.pinned_by, sizeof(p.pinned_by), "%s", t.approver);
	p.definition = d.canonical;
	p.pinned_at = (int64_t)time(NULL);
	if (tg_store_pin_set(st, &p, err) < 0)
		goto out;
	/* another process may have moved it already: the pin is the same */
	tg_store_ticket_move(st, id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, NULL);
	snprintf(subject, sizeof(subject), "upstream %s", up);
	snprintf(what, sizeof(what), "tool %s: definition %.12s accepted by %s (ticket %s)",
		 d.tool, d.sha256, t.approver, id);
	if (tg_record_event(audit, t.approver, subject, "upstream_definition_accepted", what) < 0)
		tg_log(TG_LOG_ERROR, "%s: %s: its record could not be written", subject, what);
	rc = 0;
out:
	tg_pin_definition_release(&d);
	tg_ticket_release(&t);
	return rc;
}
