/*
 * libyaml loaded with dlopen the first time a skill is read
 * (src/util/yaml.h), as libcrypto is (src/util/crypto.c).
 *
 * Owns: the table of its functions. Must never: be used before
 * tg_yaml_load said yes (the pointers are NULL until then), or unload.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/dl.h"
#include "util/yaml.h"

#define LIBYAML "libyaml-0.so.2"

struct tg_yaml_api tg_yaml;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static void load(void)
{
	static const struct dl_sym syms[] = {
#define TG_YAML_SYM(f) { #f, offsetof(struct tg_yaml_api, fn_##f) },
		TG_YAML_FUNCS(TG_YAML_SYM)
#undef TG_YAML_SYM
	};
	struct tg_yaml_api api = { 0 };

	if (DL_TABLE(LIBYAML, syms, api, failed))
		tg_yaml = api;
}

int tg_yaml_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "libyaml", "libyaml-0-2", err);
}
