/*
 * An upstream server's resources, resource templates and prompts listed
 * for its runner (exec/upstream_catalog.h; docs/UPSTREAMS.md, "Resources,
 * prompts and completions"): each list asked only when the server's
 * initialize declared its capability, followed through its pages by the
 * client with the tools' ceilings, and refused past UPSTREAM_RUN_LIST_MAX
 * bytes, so a server cannot make the gateway hold without bound what it
 * lists.
 *
 * Must never: ask a server for what it did not declare, or log its text
 * unshown (obs_shown: redacted, hidden characters as '?').
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "exec/upstream_catalog.h"
#include "obs/shown.h"
#include "util/log.h"

static const struct {
	const struct upstream_list_kind *kind;
	const char *capability;
} lists[UPSTREAM_RUN_NLISTS] = {
	[UPSTREAM_RUN_RESOURCES] = { &upstream_list_resources, "resources" },
	[UPSTREAM_RUN_TEMPLATES] = { &upstream_list_templates, "resources" },
	[UPSTREAM_RUN_PROMPTS] = { &upstream_list_prompts, "prompts" },
};

int upstream_catalog_declares(struct upstream_client *c, const char *capability)
{
	return json_is_object(json_object_get(upstream_client_capabilities(c), capability));
}

/* One list of the server's, JSON text (malloc'd), or NULL and err. */
static char *fetch_one(struct upstream_client *c, size_t i, int timeout_ms, struct tg_error *err)
{
	json_t *list = NULL;
	char *text;

	if (!upstream_catalog_declares(c, lists[i].capability))
		return strdup("[]");
	if (upstream_client_list(c, lists[i].kind, UPSTREAM_RUN_LIST_MAX, timeout_ms, &list,
				 err) < 0)
		return NULL;
	text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
}

void upstream_catalog_fetch(struct upstream_client *c, const char *name, unsigned which,
			    int timeout_ms, char *out[UPSTREAM_RUN_NLISTS])
{
	char said[UPSTREAM_RUN_LOG_LINE + 1];
	struct tg_error err;
	size_t i;

	for (i = 0; i < UPSTREAM_RUN_NLISTS; i++) {
		out[i] = NULL;
		if (!(which & (1u << i)))
			continue;
		out[i] = fetch_one(c, i, timeout_ms, &err);
		if (out[i])
			continue;
		/* it may quote the server (an error it answered) */
		obs_shown(err.msg, strlen(err.msg), said, sizeof(said));
		tg_log(TG_LOG_INFO, "upstream %s: listing failed (%s): the listing before is kept",
		       name, said);
	}
}

unsigned upstream_catalog_keep(char *kept[UPSTREAM_RUN_NLISTS], char *const *got)
{
	unsigned changed = 0;
	size_t i;

	for (i = 0; i < UPSTREAM_RUN_NLISTS; i++) {
		if (got && !got[i])
			continue;
		if (got && (!kept[i] || strcmp(kept[i], got[i]) != 0))
			changed |= 1u << i;
		free(kept[i]);
		kept[i] = got ? got[i] : NULL;
	}
	return changed;
}
