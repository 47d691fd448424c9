/*
 * libFuzzer entry point: the contract loader (src/catalog/contract.c).
 * Contracts come from tool authors: any input must load or be refused with
 * a message naming the field, in bounded time and memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_contract *c = NULL;
	struct tg_error err;

	if (tg_contract_parse((const char *)data, size, "fuzz.json", NULL, &c, &err) == 0) {
		/* a loaded contract has what the rules require */
		if (!c->name || !c->input_schema || !c->description ||
		    (c->authority != TG_AUTHORITY_READ && c->authority != TG_AUTHORITY_WRITE) ||
		    (c->authority == TG_AUTHORITY_WRITE &&
		     (c->dry_run < 0 || (!c->compensation_tool && !c->irreversible))))
			abort();
		/* one of the four kinds, which the gate switches on */
		if (c->executor < TG_EXEC_BUILTIN || c->executor > TG_EXEC_PLAN_UNDO)
			abort();
		/* a plan's executor is its kind alone, however it was spelt,
		 * and a plan is a write (held until a person approves it) */
		if ((c->executor == TG_EXEC_PLAN || c->executor == TG_EXEC_PLAN_UNDO) &&
		    (c->builtin || c->argv || c->nmounts || c->env || c->egress ||
		     c->authority != TG_AUTHORITY_WRITE))
			abort();
		tg_contract_free(c);
	} else if (!strstr(err.msg, "fuzz.json")) {
		abort(); /* every refusal names the file */
	}
	return 0;
}
