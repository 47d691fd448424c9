/*
 * The audit log (docs/AUDIT.md): every call and every decision, one JSON
 * record a line, each carrying the hash of the one before it, so that an
 * edited, removed, inserted or reordered record is found by verifying the
 * chain.
 *
 *   {"seq":7,"ts":"2026-12-01T06:40:00.123456Z","prev":"<sha256 of 6>",
 *    ...the record's own fields...,"hash":"<sha256 of this line up to here>"}
 *
 * A record's hash is SHA-256 of the line's bytes from its "{" up to, not
 * including, its `,"hash":` (verifiable with any SHA-256 tool). The first
 * record's prev is 64 zeros.
 *
 * Records are written in groups (by the caller that waits for one, when no
 * group is being written, else by a thread of the log's own), each group
 * one write and one fdatasync (unless TG_AUDIT_NOSYNC), so that a caller
 * who waited for its record (tg_audit_wait) knows it survives kill -9 and
 * a power cut. Several processes may append to one log (the gateway, and
 * `toolgate approvals` beside it): each group is written under flock, after
 * the tail is read again if another process wrote since. A file cut,
 * rewritten, moved or removed under a writer stops it (every later append
 * fails): a chain begun again in a file that lost the old one would hide
 * the loss. A record is never half-written: a write that fails is cut
 * back, and a torn last line (power lost mid-write) is cut when the log is
 * opened, with a record saying so; only the beginning of the record due
 * next is cut, never a line that is not the log's.
 */
#ifndef TOOLGATE_AUDIT_H
#define TOOLGATE_AUDIT_H

#include <stdint.h>
#include <stddef.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A record's fields, serialized, at most this (the whole line is a little
 * more: seq, ts, prev and hash). */
#define TG_AUDIT_RECORD_MAX (64 * 1024)

enum {
	TG_AUDIT_NOSYNC = 1,   /* no fdatasync: for a log on stderr, or tests */
	/* a log that is there may not be empty: for a process that appends
	 * beside a gateway (toolgate approvals, rollback), which must not
	 * begin a new chain in a log that was cut (one that is not there is
	 * begun: the gateway may log elsewhere) */
	TG_AUDIT_NOT_EMPTY = 2,
};

struct tg_audit;

/* Open (creating it, mode 0600) the log at path, or "-" for stderr (chained,
 * never synced or locked). The last record must verify: a log whose tail
 * was tampered with is refused (err says so; `toolgate audit verify` names
 * the first bad record). A path (or stderr) that is the null device turns
 * the log off: records are checked, then neither written nor waited for
 * (their ticket is 0). */
TG_API int tg_audit_open(const char *path, unsigned flags, struct tg_audit **out,
			 struct tg_error *err);
/* Every record written from now on carries "replica": name first (1 to
 * 63 letters, digits, '.', '_' or '-'), the gateway replica whose log it
 * is (docs/AUDIT.md, "Replicas and anchors"). 0, or -1 and err. */
TG_API int tg_audit_set_replica(struct tg_audit *a, const char *name, struct tg_error *err);
/* The hash of the log's first record, which names its chain (an anchor's
 * "chain"): 0 and out; 1 when the log has none yet, or is a stream. */
TG_API int tg_audit_chain(struct tg_audit *a, char out[65]);
/* Write what is pending, stop the thread, close. NULL is a no-op. */
TG_API void tg_audit_close(struct tg_audit *a);

/* Queue one record: fields_json a JSON object ("{...}") of at most
 * TG_AUDIT_RECORD_MAX bytes, without the keys seq, ts, prev, hash and
 * replica,
 * written compact with its hidden characters (bidi controls, control
 * characters, zero-width, tag characters, variation selectors) as JSON
 * escapes: the same values, and at most TG_AUDIT_RECORD_MAX bytes so
 * written. The record's time is now. A ticket (> 0; 0 when the log is off) for tg_audit_wait, or -1 and err
 * (malformed fields, or the log failed: the error says why). Blocks while
 * more than 16 MiB wait to be written. */
TG_API int64_t tg_audit_append(struct tg_audit *a, const char *fields_json,
			       struct tg_error *err);
/* Until the record of ticket is written (and synced): 0, or -1 and err
 * when the log failed. A caller that finds no group being written writes
 * the next one itself (its record and all queued before it). */
TG_API int tg_audit_wait(struct tg_audit *a, int64_t ticket, struct tg_error *err);
/* tg_audit_append and tg_audit_wait in one, without waking the log's
 * thread: a lone caller writes and syncs its own record; callers that
 * come together share a group and its sync. */
TG_API int tg_audit_record(struct tg_audit *a, const char *fields_json, struct tg_error *err);
/* 0 while the log writes; -1 and err (why it stopped) once a write failed.
 * A gateway refuses calls then: nothing runs unrecorded. */
TG_API int tg_audit_ok(struct tg_audit *a, struct tg_error *err);
/* tg_audit_ok, and whether the next write would find what it needs, as
 * far as looking tells (a readiness probe's question, docs/MCP.md,
 * "Health"): the file still the one opened at its path (one moved or
 * replaced stops the log at its next write) and its file system mounted
 * read-write with at least 1 MiB free to this user. 0, or -1 and err.
 * Two stats and a statvfs: it writes nothing, takes no lock of the
 * file's. A log on stderr is only tg_audit_ok. */
TG_API int tg_audit_check(struct tg_audit *a, struct tg_error *err);

struct tg_audit_stats {
	uint64_t records;  /* written by this process */
	uint64_t groups;   /* writes (and syncs) they took */
	uint64_t last_seq; /* the log's last record */
	char last_hash[65];
};
TG_API void tg_audit_get_stats(struct tg_audit *a, struct tg_audit_stats *st);

/* A record as noted elsewhere (`toolgate audit verify` prints the head). */
struct tg_audit_head {
	uint64_t seq;
	char hash[65];
};

/* Check a log's chain from its first record. */
struct tg_audit_report {
	uint64_t records;    /* that verified, in order */
	uint64_t last_seq;   /* the last good record's, and its hash */
	char last_hash[65];
	uint64_t bad_line;   /* 0: the whole log verifies; else the first bad line (from 1) */
	char problem[512];   /* what is wrong with it */
	char first_hash[65]; /* record 1's hash (its chain's name), "" when not read */
	int head;            /* expect given: 1 its record is there with its hash,
			      * -1 with another hash, 0 not there */
};
/* 0 and the report (bad_line says whether the chain holds), or -1 and err
 * when the file cannot be read. With expect (else NULL), a chain that holds
 * but lacks that record as noted (cut back, or rewritten whole) is bad
 * too, at the line after the last: a log is only ever appended to. The
 * log as its writers had left it when verify began: a running gateway
 * goes on writing meanwhile. */
TG_API int tg_audit_verify(const char *path, const struct tg_audit_head *expect,
			   struct tg_audit_report *rep, struct tg_error *err);

/* ---- the records of what is not a call (docs/AUDIT.md) ----
 * A call's own record is the gate's (its stage 9). These are the others,
 * each to a (NULL: nowhere), returning once the record is written: 0, or
 * -1 when the log failed (said to the library's messages, tg_log_set).
 *
 * tg_record_event: a refusal before the pipeline (a bad token, a missing
 * scope), a person's refusal, a load. subject names what it was about (a
 * tool, a ticket, a path), outcome what happened, detail why (NULL:
 * nothing to add); never a token, arguments or a result.
 *
 * tg_record_decision: a person's decision on ticket t (approved,
 * rejected, cancelled; toolgate/store.h): who, the ticket, its tool, who
 * asked, the arguments' hash, and reason (tg_gate_decide writes it). */
struct tg_ticket;
TG_API int tg_record_event(struct tg_audit *a, const char *principal, const char *subject,
			   const char *outcome, const char *detail);
TG_API int tg_record_decision(struct tg_audit *a, const char *who, const struct tg_ticket *t,
			      const char *outcome, const char *reason);

#ifdef __cplusplus
}
#endif

#endif
