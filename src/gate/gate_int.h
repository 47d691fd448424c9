/*
 * What the gate's files share (src/gate/): the pipeline runs plans
 * (saga.c) through the same stages as any call.
 */
#ifndef TG_GATE_INT_H
#define TG_GATE_INT_H

#include "exec/exec.h"
#include "toolgate/gate.h"

/* How one tool of a plan runs: the plan's catalogue and call (its
 * principal, scopes, cancellation), dry or not, under which call id. */
struct gate_run_env {
	const struct tg_catalog *catalog;
	const struct tg_call *call;
	int dry_run;
	const char *call_id;        /* NULL: none (a dry run) */
};

/* Contract k on args (JSON text): validated, run, checked against its
 * output schema; 0 and OUT *out (is_error when it refused or failed),
 * -1 and err when it could not run at all. */
/* 0 while the gate's audit log writes (or it has none); -1 and err (why
 * it stopped) once it failed: nothing is done unrecorded then. */
int gate_audit_ok(struct tg_gate *g, struct tg_error *err);

int gate_run(struct tg_gate *g, const struct gate_run_env *run, const struct tg_contract *k,
	     const char *args, struct exec_out *out, struct tg_error *err);
/* The compensation of contract k's call call_id made with call_args (JSON
 * text, or NULL): OUT *undo, *args (JSON text, malloc'd). TG_ERR_INVALID
 * for an irreversible tool or one with no compensation. */
int gate_compensation(const struct tg_catalog *cat, const struct tg_contract *k,
		      const char *call_id, const char *call_args, const struct tg_contract **undo,
		      char **args, struct tg_error *err);

/* The builtins "saga" and "saga.undo" (saga.c). */
int saga_execute(struct tg_gate *g, const struct gate_run_env *run, const char *args, size_t len,
		 struct exec_out *out, struct tg_error *err);
int saga_undo(struct tg_gate *g, const struct gate_run_env *run, const char *args, size_t len,
	      struct exec_out *out, struct tg_error *err);

/* The tools of a plan's steps (its arguments, JSON text), space-separated
 * names, for its ticket's approver to cover too; NULL if none. */
char *saga_covers(const char *args, size_t len);
/* The same for the undo of a plan (its arguments name the plan's call_id),
 * from the plan's log; NULL if there is none. */
char *saga_undo_covers(struct tg_gate *g, const char *args, size_t len);

#endif
