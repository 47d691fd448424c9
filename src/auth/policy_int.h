/*
 * What the policy's readers share inside src/auth/ (policy.c,
 * notify_config.c): a scope's tool pattern, checked and matched.
 */
#ifndef TG_AUTH_POLICY_INT_H
#define TG_AUTH_POLICY_INT_H

#include <jansson.h>
#include <stddef.h>

#include "toolgate/auth.h"

/* 1 if p (plen bytes) is a scope's pattern: a tool name's characters,
 * and one "*" at the end. */
int policy_pattern_valid(const char *p, size_t plen);
/* 1 if pattern p (plen bytes) covers the name q (qlen bytes). */
int policy_pattern_covers(const char *p, size_t plen, const char *q, size_t qlen);

/* The policy's "notify" (notify_config.c, docs/NOTIFY.md), checked field
 * by field and named in err ("policy PATH: notify.webhooks[0].url: ...");
 * OUT *out (NULL: none), *n. */
int notify_config_parse(json_t *v, const char *path, struct tg_webhook **out, size_t *n,
			struct tg_error *err);
void notify_config_free(struct tg_webhook *w, size_t n);

#endif
