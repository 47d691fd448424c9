/*
 * libFuzzer entry point: util/json_span.c, which finds a value's bytes in
 * a document jansson has read (`toolgate schema test` hands schemas and
 * instances to the validator as written). Any text: no read outside it.
 * A text jansson accepts (without a raw NUL): every item of a top-level array, and every
 * member of a top-level object (found by its name with the escapes
 * decoded), spans exactly the text jansson reads as that item or member, and walking the items with json_span_next finds
 * each where json_span_item does.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_span.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const char *t, size_t start, size_t end, json_t *want)
{
	json_t *got = json_loadb(t + start, end - start, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);

	if (!got || !json_equal(got, want))
		abort();
	json_decref(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	json_t *doc = json_loadb(t, size, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL,
				 NULL), *v;
	size_t i, at, start, end, klen;
	const char *key;

	/* anything: bounded, inside the text */
	end = json_span_value(t, size, 0, &start);
	if (end > size || (end && start >= end))
		abort();
	at = json_span_item(t, size, 0, 1);
	if (at > size)
		abort();
	at = json_span_member(t, size, 0, "a");
	if (at > size)
		abort();
	if (memchr(t, 0, size)) {
		/* jansson stops reading at a raw NUL: nothing to compare */
	} else if (json_is_array(doc)) {
		size_t walk = json_span_item(t, size, 0, 0), wstart;

		json_array_foreach(doc, i, v) {
			at = json_span_item(t, size, 0, i);
			end = at ? json_span_value(t, size, at, &start) : 0;
			if (!end)
				abort();
			same(t, start, end, v);
			/* one pass with json_span_next finds the same items */
			if (!walk || !json_span_value(t, size, walk, &wstart) || wstart != start)
				abort();
			walk = json_span_next(t, size, walk);
		}
		if (json_span_item(t, size, 0, json_array_size(doc)) != 0)
			abort();
	} else if (json_is_object(doc)) {
		json_object_keylen_foreach(doc, key, klen, v) {
			/* a name with a NUL is no C string; its escapes decoded,
			 * every other name is found, and only the one jansson
			 * read (it refused names that decode the same) */
			if (strlen(key) != klen)
				continue;
			at = json_span_member(t, size, 0, key);
			end = at ? json_span_value(t, size, at, &start) : 0;
			if (!end)
				abort();
			same(t, start, end, v);
		}
	}
	json_decref(doc);
	return 0;
}
