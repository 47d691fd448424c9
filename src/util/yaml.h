/*
 * libyaml, loaded the first time a skill's frontmatter is read
 * (src/util/yaml.c), as libcurl and libcrypto are (src/util/curl.h,
 * crypto.h): only skills need it, and a library every `toolgate run` maps
 * costs it page faults (docs/BENCHMARKS.md, "Start alone"). Include this
 * instead of yaml.h: the functions below are libyaml's, through the
 * pointers tg_yaml_load filled.
 */
#ifndef TG_UTIL_YAML_H
#define TG_UTIL_YAML_H

#include <yaml.h>

#include "toolgate/error.h"

/* the functions used, each a pointer of its own type, fn_NAME */
#define TG_YAML_FUNCS(X)                                                                  \
	X(yaml_parser_initialize) X(yaml_parser_delete) X(yaml_parser_set_input_string)   \
	X(yaml_parser_set_encoding) X(yaml_parser_parse) X(yaml_event_delete)

struct tg_yaml_api {
#define TG_YAML_FIELD(f) __typeof__(f) *fn_##f;
	TG_YAML_FUNCS(TG_YAML_FIELD)
#undef TG_YAML_FIELD
};
extern struct tg_yaml_api tg_yaml;

/* libyaml (libyaml-0.so.2) loaded, once a process, thread-safe: 0; or -1
 * and err saying it could not be and what needs it. */
int tg_yaml_load(const char *what, struct tg_error *err);

#define yaml_parser_initialize tg_yaml.fn_yaml_parser_initialize
#define yaml_parser_delete tg_yaml.fn_yaml_parser_delete
#define yaml_parser_set_input_string tg_yaml.fn_yaml_parser_set_input_string
#define yaml_parser_set_encoding tg_yaml.fn_yaml_parser_set_encoding
#define yaml_parser_parse tg_yaml.fn_yaml_parser_parse
#define yaml_event_delete tg_yaml.fn_yaml_event_delete

#endif
