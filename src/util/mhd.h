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

struct tg_mhd_api {
	enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
	struct MHD_Response *(*create_response_from_buffer)(size_t, void *,
							    enum MHD_ResponseMemoryMode);
	struct MHD_Response *(*create_response_from_callback)(uint64_t, size_t,
							      MHD_ContentReaderCallback, void *,
							      MHD_ContentReaderFreeCallback);
	void (*destroy_response)(struct MHD_Response *);
	const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *,
								enum MHD_ConnectionInfoType, ...);
	int (*get_connection_values)(struct MHD_Connection *, enum MHD_ValueKind,
				     MHD_KeyValueIterator, void *);
	const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *,
							enum MHD_DaemonInfoType, ...);
	enum MHD_Result (*is_feature_supported)(enum MHD_FEATURE);
	const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind,
					       const char *);
	enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int,
					  struct MHD_Response *);
	struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
					   MHD_AccessHandlerCallback, void *, ...);
	void (*stop_daemon)(struct MHD_Daemon *);

	void (*pcert_deinit)(gnutls_pcert_st *);
	int (*pcert_export_x509)(gnutls_pcert_st *, gnutls_x509_crt_t *);
	int (*pcert_list_import_x509_raw)(gnutls_pcert_st *, unsigned int *, const gnutls_datum_t *,
					  gnutls_x509_crt_fmt_t, unsigned int);
	void (*privkey_deinit)(gnutls_privkey_t);
	int (*privkey_import_x509_raw)(gnutls_privkey_t, const gnutls_datum_t *,
				       gnutls_x509_crt_fmt_t, const char *, unsigned int);
	int (*privkey_init)(gnutls_privkey_t *);
	void (*pubkey_deinit)(gnutls_pubkey_t);
	int (*pubkey_get_key_id)(gnutls_pubkey_t, unsigned int, unsigned char *, size_t *);
	int (*pubkey_import_privkey)(gnutls_pubkey_t, gnutls_privkey_t, unsigned int, unsigned int);
	int (*pubkey_init)(gnutls_pubkey_t *);
	void *(*session_get_ptr)(gnutls_session_t);
	const char *(*strerror)(int);
	void (*x509_crt_deinit)(gnutls_x509_crt_t);
	time_t (*x509_crt_get_activation_time)(gnutls_x509_crt_t);
	time_t (*x509_crt_get_expiration_time)(gnutls_x509_crt_t);
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
