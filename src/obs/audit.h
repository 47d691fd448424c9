/*
 * The audit log's entry for the gate (include/toolgate/audit.h is the
 * embedder's): a record whose fields are a JSON object already, queued
 * without its text made and parsed again.
 */
#ifndef TG_OBS_AUDIT_H
#define TG_OBS_AUDIT_H

#include <jansson.h>

#include "toolgate/audit.h"

/* tg_audit_record (wait) or tg_audit_append (not) of fields, an object
 * (not released), checked as a text's would be: 0, or -1 and err. */
int audit_record_object(struct tg_audit *a, json_t *fields, int wait, struct tg_error *err);
/* 1 if a is the null device's: the log is off, a record need not be made. */
int audit_discards(const struct tg_audit *a);
/* The name tg_audit_set_replica gave a's records, "" for none: the
 * replica whose head the gate anchors in its store (src/gate/watch.c). */
const char *audit_replica(const struct tg_audit *a);
/* 1 if a's file holds record seq with hash (a head anchored earlier), 0 if
 * not (cut back before it, or rewritten), -1 and err if it could not be
 * read. Reads the whole log: once a run, off a call's path. */
int audit_holds(struct tg_audit *a, uint64_t seq, const char *hash, struct tg_error *err);

#endif
