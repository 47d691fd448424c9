/*
 * The gateway's egress budget (docs/EGRESS.md, "Limits"): the connections
 * through every egress proxy of the process together, at most EGRESS_ALL
 * (each a thread and two descriptors of the gateway, which no sandbox
 * limit counts), of which the proxies of one principal hold at most
 * EGRESS_SHARE however many runs it has going: one tenant's concurrent
 * calls cannot leave every other tenant's egress refused.
 *
 * It must never count a connection twice nor give one back twice, and
 * never block: a take is decided at once under one lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/egress_int.h"

struct egress_share {
	struct egress_share *next;
	unsigned proxies;  /* of this principal, started and not stopped */
	unsigned clients;  /* their connections */
	char principal[];  /* "" for none */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct egress_share *shares;
static unsigned all_clients;

struct egress_share *egress_share_get(const char *principal)
{
	struct egress_share *s;
	size_t len;

	if (!principal)
		principal = "";
	len = strnlen(principal, EGRESS_PRINCIPAL_MAX);
	pthread_mutex_lock(&lock);
	for (s = shares; s; s = s->next)
		if (strlen(s->principal) == len && memcmp(s->principal, principal, len) == 0)
			break;
	if (!s && (s = calloc(1, sizeof(*s) + len + 1))) {
		if (len)
			memcpy(s->principal, principal, len);
		s->next = shares;
		shares = s;
	}
	if (s)
		s->proxies++;
	pthread_mutex_unlock(&lock);
	return s;
}

void egress_share_put(struct egress_share *s)
{
	struct egress_share **at;

	if (!s)
		return;
	pthread_mutex_lock(&lock);
	if (--s->proxies == 0) {
		for (at = &shares; *at != s; at = &(*at)->next)
			;
		*at = s->next;
		free(s);
	}
	pthread_mutex_unlock(&lock);
}

const char *egress_budget_take(struct egress_share *s)
{
	const char *full = NULL;

	pthread_mutex_lock(&lock);
	if (all_clients >= EGRESS_ALL)
		full = "too many connections through the gateway's proxies at once";
	else if (s->clients >= EGRESS_SHARE)
		full = "this principal's runs hold their share of the gateway's proxies already";
	else
		all_clients++, s->clients++;
	pthread_mutex_unlock(&lock);
	return full;
}

void egress_budget_give(struct egress_share *s)
{
	pthread_mutex_lock(&lock);
	all_clients--;
	s->clients--;
	pthread_mutex_unlock(&lock);
}
