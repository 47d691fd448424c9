/*
 * libFuzzer entry point: util/json_wide.c, which reads a message's
 * numbers past what jansson holds (a tools/call's arguments keep every
 * digit) and makes the arguments' canonical text. Any text: no read
 * outside it, an error's position inside it. Where jansson reads the
 * text, the wide reader reads the same value and the canonical text is
 * jansson's own form (the fingerprints already stored stay valid); where
 * only the wide reader does, jansson's refusal was a number's overflow,
 * and the canonical text begins with the value's sorted compact form.
 * The text as jansson writes it (numbers as written) reads as the same
 * value, with the same canonical text.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_wide.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	json_error_t je, we;
	json_t *j = json_loadb(t, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	json_t *w = json_wide_load(t, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &we);
	int has_long = json_wide_has_long(t, size);
	char *canon = json_wide_canonical(t, size), *form;

	if (j && (!w || !json_equal(j, w)))
		abort(); /* the wide reader changes nothing jansson reads */
	if (!j && w && json_error_code(&je) != json_error_numeric_overflow)
		abort(); /* it reads only what jansson refused for a number */
	if (!w && (we.position < 0 || (size_t)we.position > size))
		abort();
	if (j && !has_long) {
		form = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
		if (form && (!canon || strcmp(form, canon) != 0))
			abort();
		free(form);
	}
	if (w && has_long && !canon)
		abort(); /* a value the wide reader reads has a canonical text */
	if (w && canon && has_long) {
		form = json_dumps(w, JSON_COMPACT | JSON_SORT_KEYS);
		if (form && strncmp(form, canon, strlen(form)) != 0)
			abort();
		if (form && canon[strlen(form)] != '\n')
			abort(); /* a long number's digits follow the form */
		free(form);
	}
	if (w) {
		/* as jansson writes it: the same value, the same literals */
		size_t clen;
		char *c = json_wide_text(t, size, &clen), *again;
		json_t *cw = c ? json_wide_load(c, clen, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
						NULL) : NULL;

		if (c && (!cw || !json_equal(cw, w)))
			abort();
		again = c ? json_wide_canonical(c, clen) : NULL;
		if (again && canon && strcmp(again, canon) != 0)
			abort();
		free(again);
		json_decref(cw);
		free(c);
	}
	free(canon);
	json_decref(j);
	json_decref(w);
	return 0;
}
