/*
 * libcurl loaded with dlopen the first time it is needed (src/util/curl.h),
 * as systemd loads its optional libraries: libcurl and what it brings
 * (OpenSSL, Kerberos, LDAP, SSH, HTTP/2, ...) cost a process some 10 ms
 * to map and relocate on the machines measured, which every `toolgate
 * run` would pay for a library only the gateway's fetches use.
 *
 * Owns: the table of libcurl's functions. Must never: be used before
 * tg_curl_load said yes (the pointers are NULL until then), or unload.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "util/curl.h"
#include "util/dl.h"

#define LIBCURL "libcurl.so.4"

struct tg_curl_api tg_curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static void load(void)
{
	static const struct dl_sym syms[] = {
#define SYM(f, field) { f, offsetof(struct tg_curl_api, field) }
		SYM("curl_easy_init", easy_init), SYM("curl_easy_setopt", easy_setopt),
		SYM("curl_easy_perform", easy_perform), SYM("curl_easy_cleanup", easy_cleanup),
		SYM("curl_easy_getinfo", easy_getinfo), SYM("curl_easy_strerror", easy_strerror),
		SYM("curl_slist_append", slist_append), SYM("curl_slist_free_all", slist_free_all),
		SYM("curl_multi_init", multi_init), SYM("curl_multi_setopt", multi_setopt),
		SYM("curl_multi_add_handle", multi_add_handle),
		SYM("curl_multi_remove_handle", multi_remove_handle),
		SYM("curl_multi_perform", multi_perform), SYM("curl_multi_poll", multi_poll),
		SYM("curl_multi_info_read", multi_info_read), SYM("curl_multi_cleanup", multi_cleanup),
#undef SYM
	};
	struct tg_curl_api api = { 0 };
	CURLcode (*global_init)(long);
	void *h = DL_TABLE(LIBCURL, syms, api, failed);

	if (!h)
		return;
	*(void **)&global_init = dlsym(h, "curl_global_init");
	if (!global_init || global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(failed, sizeof(failed), "%s did not initialize", LIBCURL);
		return;
	}
	tg_curl = api;
}

int tg_curl_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "libcurl", "libcurl4", err);
}
