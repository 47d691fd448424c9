/*
 * A map from pointers to pointers (struct ptrmap, schema_int.h): open
 * addressing, a power-of-two capacity at most half full. The compiler
 * keys its nodes and owners by the address of their jansson value, and
 * the loader (load.c) the exact numbers of a schema document.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

static size_t slot(const void *key, size_t cap)
{
	uintptr_t h = (uintptr_t)key;

	h ^= h >> 17;
	h *= (uintptr_t)0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 7) & (cap - 1);
}

void *ptrmap_get(const struct ptrmap *m, const void *key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

/* Insert or replace. -1 on ENOMEM. */
int ptrmap_put(struct ptrmap *m, const void *key, void *val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, j;
		const void **k = calloc(cap, sizeof(m->keys[0]));
		void **v = calloc(cap, sizeof(m->vals[0]));

		if (!k || !v) {
			free(k);
			free(v);
			return -1;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			for (i = slot(m->keys[j], cap); k[i]; i = (i + 1) & (cap - 1))
				;
			k[i] = m->keys[j];
			v[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = k;
		m->vals = v;
		m->cap = cap;
	}
	for (i = slot(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

void ptrmap_release(struct ptrmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

