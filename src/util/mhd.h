/*
 * libmicrohttpd and GnuTLS, loaded the first time the gateway serves HTTP
 * (src/util/mhd.c), as libcurl is (src/util/curl.h): only `serve --http`
 * needs them, and mapping them, with what GnuTLS brings (nettle, gmp,
 * p11-kit, libtasn1, libidn2...), cost every `toolgate run` some 3 ms on
 * the machines measured (docs/BENCHMARKS.md, "Start alone"). Include this
 * instead of <microhttpd.h> and GnuTLS's headers: the MHD_ and gnutls_
 * functions below are theirs, through the pointers tg_mhd_load filled.
 */
#ifndef TG_UTIL_MHD_H
#define TG_UTIL_MHD_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "toolgate/error.h"

/* each the pointer of its function's own type, as the headers declare it */
struct tg_mhd_api {
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_destroy_response) *destroy_response;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_is_feature_supported) *is_feature_supported;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;

	__typeof__(gnutls_pcert_deinit) *pcert_deinit;
	__typeof__(gnutls_pcert_export_x509) *pcert_export_x509;
	__typeof__(gnutls_pcert_list_import_x509_raw) *pcert_list_import_x509_raw;
	__typeof__(gnutls_privkey_deinit) *privkey_deinit;
	__typeof__(gnutls_privkey_import_x509_raw) *privkey_import_x509_raw;
	__typeof__(gnutls_privkey_init) *privkey_init;
	__typeof__(gnutls_pubkey_deinit) *pubkey_deinit;
	__typeof__(gnutls_pubkey_get_key_id) *pubkey_get_key_id;
	__typeof__(gnutls_pubkey_import_privkey) *pubkey_import_privkey;
	__typeof__(gnutls_pubkey_init) *pubkey_init;
	__typeof__(gnutls_session_get_ptr) *session_get_ptr;
	__typeof__(gnutls_strerror) *strerror;
	__typeof__(gnutls_x509_crt_deinit) *x509_crt_deinit;
	__typeof__(gnutls_x509_crt_get_activation_time) *x509_crt_get_activation_time;
	__typeof__(gnutls_x509_crt_get_expiration_time) *x509_crt_get_expiration_time;
};
extern struct tg_mhd_api tg_mhd;

/* libmicrohttpd (libmicrohttpd.so.12) and GnuTLS (libgnutls.so.30)
 * loaded, once a process, thread-safe: 0; or -1 and err saying they
 * could not be and what needs them (what: "serve --http"). */
int tg_mhd_load(const char *what, struct tg_error *err);

#define MHD_add_response_header tg_mhd.add_response_header
#define MHD_create_response_from_buffer tg_mhd.create_response_from_buffer
#define MHD_create_response_from_callback tg_mhd.create_response_from_callback
#define MHD_destroy_response tg_mhd.destroy_response
#define MHD_get_connection_info tg_mhd.get_connection_info
#define MHD_get_connection_values tg_mhd.get_connection_values
#define MHD_get_daemon_info tg_mhd.get_daemon_info
#define MHD_is_feature_supported tg_mhd.is_feature_supported
#define MHD_lookup_connection_value tg_mhd.lookup_connection_value
#define MHD_queue_response tg_mhd.queue_response
#define MHD_start_daemon tg_mhd.start_daemon
#define MHD_stop_daemon tg_mhd.stop_daemon

#define gnutls_pcert_deinit tg_mhd.pcert_deinit
#define gnutls_pcert_export_x509 tg_mhd.pcert_export_x509
#define gnutls_pcert_list_import_x509_raw tg_mhd.pcert_list_import_x509_raw
#define gnutls_privkey_deinit tg_mhd.privkey_deinit
#define gnutls_privkey_import_x509_raw tg_mhd.privkey_import_x509_raw
#define gnutls_privkey_init tg_mhd.privkey_init
#define gnutls_pubkey_deinit tg_mhd.pubkey_deinit
#define gnutls_pubkey_get_key_id tg_mhd.pubkey_get_key_id
#define gnutls_pubkey_import_privkey tg_mhd.pubkey_import_privkey
#define gnutls_pubkey_init tg_mhd.pubkey_init
#define gnutls_session_get_ptr tg_mhd.session_get_ptr
#define gnutls_strerror tg_mhd.strerror
#define gnutls_x509_crt_deinit tg_mhd.x509_crt_deinit
#define gnutls_x509_crt_get_activation_time tg_mhd.x509_crt_get_activation_time
#define gnutls_x509_crt_get_expiration_time tg_mhd.x509_crt_get_expiration_time

#endif
