/*
 * libcurl, loaded the first time a part of the gateway needs it
 * (src/util/curl.c): OTLP traces, webhooks, identity providers, HTTP
 * upstreams. The command links none of its libraries, so that `toolgate
 * run` and every command that fetches nothing start without them
 * (docs/BENCHMARKS.md, "Start alone"). Include this instead of
 * <curl/curl.h>: the curl_ functions below are libcurl's, through the
 * pointers tg_curl_load filled.
 */
#ifndef TG_UTIL_CURL_H
#define TG_UTIL_CURL_H

/* the type-checking wrappers of typecheck-gcc.h are macros of the same
 * names as the pointers' */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

#include "toolgate/error.h"

struct tg_curl_api {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	void (*easy_cleanup)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_setopt)(CURLM *, CURLMoption, ...);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_perform)(CURLM *, int *);
	CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd[], unsigned int, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_cleanup)(CURLM *);
};
extern struct tg_curl_api tg_curl;

/* libcurl (libcurl.so.4) loaded and initialized, once a process,
 * thread-safe: 0; or -1 and err saying it could not be and what needs it
 * (what: "webhooks", "OTLP traces", ...). */
int tg_curl_load(const char *what, struct tg_error *err);

/* curl.h's own three-argument wrappers of these go first */
#undef curl_easy_setopt
#undef curl_easy_getinfo
#undef curl_multi_setopt
#define curl_easy_init tg_curl.easy_init
#define curl_easy_setopt tg_curl.easy_setopt
#define curl_easy_perform tg_curl.easy_perform
#define curl_easy_cleanup tg_curl.easy_cleanup
#define curl_easy_getinfo tg_curl.easy_getinfo
#define curl_easy_strerror tg_curl.easy_strerror
#define curl_slist_append tg_curl.slist_append
#define curl_slist_free_all tg_curl.slist_free_all
#define curl_multi_init tg_curl.multi_init
#define curl_multi_setopt tg_curl.multi_setopt
#define curl_multi_add_handle tg_curl.multi_add_handle
#define curl_multi_remove_handle tg_curl.multi_remove_handle
#define curl_multi_perform tg_curl.multi_perform
#define curl_multi_poll tg_curl.multi_poll
#define curl_multi_info_read tg_curl.multi_info_read
#define curl_multi_cleanup tg_curl.multi_cleanup

#endif
