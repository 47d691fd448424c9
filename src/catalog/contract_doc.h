/*
 * What the library keeps of a contract for itself, beyond its public
 * fields (toolgate/contract.h): the input schema parsed as a JSON
 * document, which the anomaly rules walk (src/auth/anomaly.c). The type
 * stays out of the public header: a program that embeds the library sees
 * a pointer it does not use.
 */
#ifndef TOOLGATE_CATALOG_CONTRACT_DOC_H
#define TOOLGATE_CATALOG_CONTRACT_DOC_H

#include <jansson.h>

#include "toolgate/contract.h"

/* The input schema of k, parsed; read-only, the contract's. */
static inline json_t *contract_input_doc(const struct tg_contract *k)
{
	return (json_t *)k->input_schema_doc;
}

#endif
