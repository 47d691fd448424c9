/*
 * The words the built-in rules need (src/skills/rules_builtin.c,
 * builtin_needs), found in one pass over a file: an Aho-Corasick
 * automaton, its goto function made a full table, so a byte costs one
 * lookup and a state's words are a bit set. A rule whose words are all
 * absent from a file is not run on it (src/skills/scan.c).
 */
#include <stdlib.h>
#include <string.h>

#include "skills/skill_int.h"

#define STATES_MAX 4096

void words_release(struct words *w)
{
	free(w->go);
	free(w->out);
	memset(w, 0, sizeof(*w));
}

/* Word text[0, n) as word number id: its path of states made. */
static int add_word(struct words *w, const char *text, size_t n, unsigned id)
{
	unsigned st = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)text[i];

		if (!w->go[st][c]) {
			if (w->states == STATES_MAX)
				return -1;
			w->go[st][c] = (uint16_t)w->states++;
		}
		st = w->go[st][c];
	}
	w->out[st][id / 64] |= 1ull << (id % 64);
	return 0;
}

/* The failure links folded into the table, breadth first: a missing
 * move goes where the longest suffix that is a word's prefix would, and
 * a state's words include its failure's. */
static int complete(struct words *w)
{
	uint16_t *fail = calloc(w->states, sizeof(*fail)), *queue = malloc(w->states * 2);
	size_t head = 0, tail = 0;

	if (!fail || !queue) {
		free(fail);
		free(queue);
		return -1;
	}
	for (unsigned c = 0; c < 256; c++)
		if (w->go[0][c])
			queue[tail++] = w->go[0][c];
	while (head < tail) {
		uint16_t st = queue[head++];

		for (int k = 0; k < WORDS_BITS / 64; k++)
			w->out[st][k] |= w->out[fail[st]][k];
		for (unsigned c = 0; c < 256; c++) {
			uint16_t next = w->go[st][c];

			if (next) {
				fail[next] = w->go[fail[st]][c];
				queue[tail++] = next;
			} else {
				w->go[st][c] = w->go[fail[st]][c];
			}
		}
	}
	free(fail);
	free(queue);
	return 0;
}

int words_build(struct words *w, struct skill_rule *rules, size_t n)
{
	unsigned id = 0;

	memset(w, 0, sizeof(*w));
	w->go = calloc(STATES_MAX, sizeof(*w->go));
	w->out = calloc(STATES_MAX, sizeof(*w->out));
	if (!w->go || !w->out)
		goto fail;
	w->states = 1;
	for (size_t r = 0; r < n; r++) {
		const char *at = rules[r].need;

		memset(rules[r].need_mask, 0, sizeof(rules[r].need_mask));
		while (at && *at) {
			size_t len = strcspn(at, "|");

			if (id == WORDS_BITS || add_word(w, at, len, id) < 0)
				goto fail;
			rules[r].need_mask[id / 64] |= 1ull << (id % 64);
			id++;
			at += len + (at[len] == '|');
		}
	}
	if (complete(w) < 0)
		goto fail;
	/* the table as large as its states (a 4096-state table is 2 MiB) */
	{
		void *go = realloc(w->go, w->states * sizeof(*w->go));
		void *out = realloc(w->out, w->states * sizeof(*w->out));

		if (go)
			w->go = go;
		if (out)
			w->out = out;
	}
	return 0;
fail:
	words_release(w);
	return -1;
}

void words_scan(const struct words *w, const char *text, size_t len, uint64_t *found)
{
	unsigned st = 0;

	memset(found, 0, WORDS_BITS / 8);
	for (size_t i = 0; i < len; i++) {
		st = w->go[st][(unsigned char)text[i]];
		if (st)
			for (int k = 0; k < WORDS_BITS / 64; k++)
				found[k] |= w->out[st][k];
	}
}
