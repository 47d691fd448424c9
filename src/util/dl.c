/*
 * The table filling the optional libraries' loaders share (src/util/dl.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "util/dl.h"

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
