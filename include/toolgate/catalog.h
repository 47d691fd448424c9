/*
 * toolgate catalogue: the one list of what agents can call, loaded from a
 * directory of contracts (docs/contracts.md), several versions of a tool
 * side by side.
 *
 * "name" resolves to the highest version that is not deprecated, "name@1"
 * to the highest 1.x, "name@1.2" to the highest 1.2.x, "name@1.2.3" to
 * exactly that. Pre-releases are only reached by their exact version. A
 * version past its sunset date is refused with an error naming its
 * replacement.
 */
#ifndef TOOLGATE_CATALOG_H
#define TOOLGATE_CATALOG_H

#include <stddef.h>

#include "toolgate/contract.h"
#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tg_catalog;

/* Load every *.json file of dir (not recursive), the resources and prompts
 * of its resources/ and prompts/ folders, and the upstreams declared in
 * its upstreams/ folder (NAME.json each; a file not ending .json there is
 * ignored, a missing folder is none). -1 with err naming the first
 * contract or declaration refused, the two files of a duplicate
 * name@version, or the contract and the upstream of a name in an
 * upstream's namespace (NAME.). */
TG_API int tg_catalog_load_dir(const char *dir, const struct tg_schema_options *opts,
			       struct tg_catalog **out, struct tg_error *err);
TG_API void tg_catalog_free(struct tg_catalog *catalog);
/* The names of catalog's files (its contracts', resources', prompts' and
 * upstreams' "where it was loaded from") that begin with from, begun with
 * to instead: for a catalogue loaded from a copy of folder to (serve
 * --catalog-trust loads the bytes it verified, copied), so that messages
 * and reloads name the folder. 0, or -1 out of memory (some renamed). */
TG_API int tg_catalog_rebase(struct tg_catalog *catalog, const char *from, const char *to);

/* The contracts, sorted by name and then version (ascending). */
TG_API size_t tg_catalog_count(const struct tg_catalog *catalog);
TG_API const struct tg_contract *tg_catalog_at(const struct tg_catalog *catalog, size_t i);

/* The upstreams declared (docs/UPSTREAMS.md), sorted by name, borrowed
 * from the catalog. They are carried, not run: nothing of the catalogue
 * starts a server. */
struct tg_upstream;
TG_API size_t tg_catalog_upstream_count(const struct tg_catalog *catalog);
TG_API const struct tg_upstream *tg_catalog_upstream_at(const struct tg_catalog *catalog,
							size_t i);

/* One tool of upstream u (docs/UPSTREAMS.md, "Serving"), as a contract
 * of executor kind TG_EXEC_UPSTREAM: def_json is one entry of the
 * server's tools/list (len bytes, at most TG_UPSTREAM_MAX_DEFINITION).
 * Its name, title, description, inputSchema and outputSchema are the
 * server's, the schemas compiled by toolgate's validator; what it may do
 * is u's (a write unless declared read, whatever its annotations say; a
 * write without a declared compensation is irreversible); its version is
 * 0.0.0+D, D the first 24 hex digits of its definition's SHA-256
 * (tg_upstream_definition), so that a ticket approved for it names this
 * definition and no other. 0 and OUT *out; 1 when u hides the tool (*out NULL); -1 and err
 * naming the upstream and the tool: a name outside MCP's tool-name rules,
 * no inputSchema, a schema that does not compile, a title or description
 * that is not a string of at most 64 KiB, an exposed name over 128
 * characters, a declared dry_run.argument that is not a boolean property
 * of the inputSchema, a definition canonical JSON cannot hold. */
TG_API int tg_catalog_upstream_tool(const struct tg_upstream *u, const char *def_json, size_t len,
				    struct tg_contract **out, struct tg_error *err);
/* What changed between two definitions of upstream u's tool (each one
 * entry of its tools/list, at most TG_UPSTREAM_MAX_DEFINITION bytes:
 * old_def a pin's, NULL when the tool is added; new_def a listing's),
 * for a person to read (docs/UPSTREAMS.md, "Pins"): OUT *text (lines,
 * malloc'd; every text of the server's as ASCII-only JSON, each cut at
 * 128 KiB, saying how much was left out) and
 * *breaking, catalog diff's judgement of the schemas (1: it breaks
 * callers; a schema that cannot be compared is judged breaking; an added
 * tool breaks nobody). -1 and err: a definition that is not a JSON
 * object, over the bound, out of memory. */
TG_API int tg_catalog_upstream_diff(const struct tg_upstream *u, const char *old_def,
				    size_t old_len, const char *new_def, size_t new_len,
				    char **text, int *breaking, struct tg_error *err);
/* A catalogue of base's contracts, resources, prompts and upstreams and
 * the n contracts of tools (each made by tg_catalog_upstream_tool), of
 * which it takes ownership, whatever it returns (the array itself stays
 * the caller's). base is borrowed: it must outlive the result. OUT *out.
 * -1 and err when a name would be served twice, or out of memory. */
TG_API int tg_catalog_derive(const struct tg_catalog *base, struct tg_contract **tools, size_t n,
			     struct tg_catalog **out, struct tg_error *err);

/* Resolve a reference (see above). today is "YYYY-MM-DD" for the sunset
 * check (NULL: the current UTC date). OUT *out, borrowed from the catalog.
 * -1: TG_ERR_INVALID for a malformed reference or an unknown tool or
 * version, TG_ERR_UNAVAILABLE past the sunset. */
TG_API int tg_catalog_resolve(const struct tg_catalog *catalog, const char *ref,
			      const char *today, const struct tg_contract **out,
			      struct tg_error *err);

/* The MCP tool definition of a contract, JSON text (malloc'd): name (the
 * given exposed name, or the contract's), title, description, inputSchema,
 * outputSchema, and annotations derived from the contract alone:
 * readOnlyHint from authority, destructiveHint from authority, risk and
 * irreversibility, idempotentHint and openWorldHint from the contract. */
TG_API char *tg_catalog_mcp_tool(const struct tg_contract *contract, const char *exposed_name,
				 struct tg_error *err);

/* Resources and prompts (DIR/resources/NAME.json, DIR/prompts/NAME.json; see
 * docs/contracts.md), shaped as MCP serves them. Each function returns
 * JSON text (malloc'd), or NULL and err. */
TG_API size_t tg_catalog_resource_count(const struct tg_catalog *catalog);
TG_API size_t tg_catalog_prompt_count(const struct tg_catalog *catalog);
/* The resource definitions (templates: the resource templates), an array. */
TG_API char *tg_catalog_resources_json(const struct tg_catalog *catalog, int templates,
				       struct tg_error *err);
/* resources/read: the "contents" array for uri (a resource's, or a
 * template's with its variables filled in); TG_ERR_INVALID when none. */
TG_API char *tg_catalog_resource_read(const struct tg_catalog *catalog, const char *uri,
				      struct tg_error *err);
TG_API char *tg_catalog_prompts_json(const struct tg_catalog *catalog, struct tg_error *err);
/* prompts/get: {description, messages} with {{argument}} filled from
 * args_json (an object of strings; NULL: none); TG_ERR_INVALID for an
 * unknown prompt or a missing required argument. */
TG_API char *tg_catalog_prompt_get(const struct tg_catalog *catalog, const char *name,
				   const char *args_json, struct tg_error *err);
/* What prompt name asks the user before it renders (its "elicit", JSON
 * text {key, message, requestedSchema}, malloc'd), or NULL: nothing, or
 * no such prompt. The answered fields are arguments of prompt_get. */
TG_API char *tg_catalog_prompt_elicit(const struct tg_catalog *catalog, const char *name);
/* completion/complete for a prompt's argument: {values, total, hasMore},
 * the listed completions that start with value (NULL prompt: none). */
TG_API char *tg_catalog_complete(const struct tg_catalog *catalog, const char *prompt,
				 const char *argument, const char *value, struct tg_error *err);

/* What changed between two versions of a tool, and whether it breaks its
 * callers (diff.c says which changes do). */
struct tg_diff {
	struct {
		char text[320];
		int breaking;
	} findings[128];
	size_t n;
	int breaking;           /* any finding breaks callers */
};

/* Compare two versions of a tool's contract. OUT *d. */
TG_API int tg_catalog_diff(const struct tg_contract *old_version,
			   const struct tg_contract *new_version, struct tg_diff *d,
			   struct tg_error *err);

/* Check every contract of dir without stopping at the first problem:
 * each file that does not load, each name@version found twice, each
 * breaking change between consecutive versions that keep their major
 * version, each upstream declaration that does not load, each contract
 * in an upstream's namespace, what tg_upstream_lint finds in each
 * declaration that loads (a launcher that fetches its package, a secret
 * in argv, env or the url). report is called with one line per problem
 * (and, for a breaking change, one indented line per breaking finding).
 * OUT *files: how many contracts were read, *upstreams: how many upstream
 * declarations. Returns the number of problems, or -1 with err when dir
 * (or its upstreams/ folder) cannot be read. */
TG_API int tg_catalog_lint(const char *dir, const struct tg_schema_options *opts,
			   void (*report)(const char *line, void *ctx), void *ctx,
			   size_t *files, size_t *upstreams, struct tg_error *err);

#ifdef __cplusplus
}
#endif
#endif
