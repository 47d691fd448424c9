/*
 * The table filling the optional libraries' loaders share (src/util/dl.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dl.h"
#include "util/log.h"

void *dl_table(const char *lib, const struct dl_sym *syms, size_t n, void *table, char *why,
	       size_t len)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!h) {
		snprintf(why, len, "%s", dlerror());
		return NULL;
	}
	for (i = 0; i < n; i++) {
		void *f = dlsym(h, syms[i].name);

		if (!f) {
			snprintf(why, len, "%s has no %s", lib, syms[i].name);
			return NULL;
		}
		memcpy((char *)table + syms[i].offset, &f, sizeof(f));
	}
	return h;
}

int dl_loaded(const char *failed, const char *what, const char *lib, const char *package,
	      struct tg_error *err)
{
	if (!failed[0])
		return 0;
	return tg_error_set(err, TG_ERR_SYSTEM, "%s: %s could not be loaded (%s): install %s", what,
			    lib, failed, package);
}

void dl_need(const char *failed, const char *lib, const char *package)
{
	if (!failed[0])
		return;
	tg_log(TG_LOG_ERROR, "%s could not be loaded (%s): install %s", lib, failed, package);
	abort();
}
