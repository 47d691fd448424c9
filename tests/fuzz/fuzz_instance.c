/*
 * libFuzzer entry point: the validator's instance parser (jv.c), which
 * reads every tool call's arguments. Any input must parse or be refused
 * with an error, in bounded time and memory; and what it accepts must
 * agree with jansson: when jansson parses the same text (it refuses some
 * of what jv accepts, integers past 64 bits, NUL in names), the two trees
 * are equal, and a tree is equal to itself and hashes alike.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	struct jv_doc d, e;
	json_error_t jerr;
	json_t *j;
	int ok;

	ok = jv_parse(&d, (const char *)data, size, 64, &err) == 0;
	if (!ok && err.msg[0] == '\0')
		abort(); /* refused must say why */
	j = json_loadb((const char *)data, size,
		       JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (ok) {
		if (!jv_equal(&d.root, &d.root) || jv_hash(&d.root) != jv_hash(&d.root))
			abort();
		if (j && jv_from_json(&e, j, 64, &err) == 0) {
			if (!jv_equal(&d.root, &e.root) || jv_hash(&d.root) != jv_hash(&e.root))
				abort(); /* the two parsers read the text differently */
			jv_doc_release(&e);
		}
		jv_doc_release(&d);
	} else if (j && jv_from_json(&e, j, 64, &err) == 0) {
		/* jansson accepted what jv refused: only depth may differ, or
		 * a raw NUL byte (jansson stops reading at one) */
		if (!strstr(err.msg, "nested") && !memchr(data, 0, size))
			abort();
		jv_doc_release(&e);
	}
	json_decref(j);
	return 0;
}
