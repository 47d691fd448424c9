/*
 * libmicrohttpd and GnuTLS loaded with dlopen the first time the gateway
 * serves HTTP (src/util/mhd.h), as libcurl is (src/util/curl.c).
 *
 * Owns: the table of their functions. Must never: be used before
 * tg_mhd_load said yes (the pointers are NULL until then), or unload.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/dl.h"
#include "util/mhd.h"

#define LIBMHD "libmicrohttpd.so.12"
#define LIBGNUTLS "libgnutls.so.30"

struct tg_mhd_api tg_mhd;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why they could not be loaded; "" when they were */

static const struct dl_sym mhd_syms[] = {
#define M(f) { "MHD_" #f, offsetof(struct tg_mhd_api, f) }
#define G(f) { "gnutls_" #f, offsetof(struct tg_mhd_api, f) }
	M(add_response_header), M(create_response_from_buffer),
	M(create_response_from_callback), M(destroy_response), M(get_connection_info),
	M(get_connection_values), M(get_daemon_info), M(is_feature_supported),
	M(lookup_connection_value), M(queue_response), M(start_daemon), M(stop_daemon),
}, gnutls_syms[] = {
	G(pcert_deinit), G(pcert_export_x509), G(pcert_list_import_x509_raw), G(privkey_deinit),
	G(privkey_import_x509_raw), G(privkey_init), G(pubkey_deinit), G(pubkey_get_key_id),
	G(pubkey_import_privkey), G(pubkey_init), G(session_get_ptr), G(strerror),
	G(x509_crt_deinit), G(x509_crt_get_activation_time), G(x509_crt_get_expiration_time),
#undef M
#undef G
};

static void load(void)
{
	struct tg_mhd_api api = { 0 };

	if (DL_TABLE(LIBMHD, mhd_syms, api, failed) && DL_TABLE(LIBGNUTLS, gnutls_syms, api, failed))
		tg_mhd = api;
}

int tg_mhd_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "libmicrohttpd and GnuTLS", "libmicrohttpd12", err);
}
