/*
 * bench/schema: validations per second of toolgate's compiled schemas on
 * the groups bench/schema/make-groups.py writes (the JSON Schema Test
 * Suite's cases and realistic tool-argument schemas). The instances are
 * parsed once into the validator's instance form, as ajv's are into
 * JavaScript values, so both sides measure validation alone.
 * bench/schema.sh runs ajv on the same groups in the same run and prints
 * the ratios. Not a test: it asserts nothing.
 *
 * usage: schema GROUPS.json SECONDS-PER-GROUP
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schema/schema_int.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	json_t *groups, *g, *out = json_object();
	json_error_t jerr;
	double seconds;
	size_t gi;

	if (argc != 3) {
		fprintf(stderr, "usage: schema GROUPS.json SECONDS-PER-GROUP\n");
		return 2;
	}
	seconds = atof(argv[2]);
	groups = json_load_file(argv[1], JSON_ALLOW_NUL, &jerr);
	if (!json_is_array(groups)) {
		fprintf(stderr, "schema: %s: %s\n", argv[1], jerr.text);
		return 2;
	}
	json_array_foreach(groups, gi, g) {
		json_t *cases = json_object_get(g, "cases"), *c;
		size_t nc = json_array_size(cases), ci, n = 0;
		struct tg_schema **schemas = calloc(nc, sizeof(*schemas));
		struct jv_doc *docs = calloc(nc, sizeof(*docs));
		double t0, t;
		long sink = 0;

		json_array_foreach(cases, ci, c) {
			char *text = json_dumps(json_object_get(c, "schema"), JSON_ENCODE_ANY);
			struct tg_error err;

			if (!text || tg_schema_compile(text, strlen(text), NULL, &schemas[ci], &err) < 0 ||
			    jv_from_json(&docs[ci], json_object_get(c, "instances"), 1000, &err) < 0) {
				tg_schema_free(schemas[ci]);
				schemas[ci] = NULL;
			}
			free(text);
		}
		t0 = now_s();
		do {
			json_array_foreach(cases, ci, c) {
				const struct jv *insts = &docs[ci].root;
				uint32_t ii;

				if (!schemas[ci])
					continue;
				for (ii = 0; ii < insts->n; ii++) {
					sink += schema_validate_jv(schemas[ci], &insts->u.items[ii], NULL,
								   NULL);
					n++;
				}
			}
			t = now_s() - t0;
		} while (t < seconds);
		json_object_set_new(out, json_string_value(json_object_get(g, "name")),
				    json_real((double)n / t));
		for (ci = 0; ci < nc; ci++) {
			if (schemas[ci])
				jv_doc_release(&docs[ci]);
			tg_schema_free(schemas[ci]);
		}
		free(schemas);
		free(docs);
		if (sink == -12345)
			puts("");
	}
	{
		char *text = json_dumps(out, JSON_COMPACT);

		puts(text);
		free(text);
	}
	json_decref(out);
	json_decref(groups);
	return 0;
}
