/*
 * serve --redact-gitleaks FILE (docs/REDACTION.md, "gitleaks
 * configurations"): an operator's redaction rules, in use for every
 * redaction the gateway makes (tool results, log lines, the audit log,
 * traces) beside the built-in ones. Read at start, where a file that
 * does not load stops serve, and again on SIGHUP, where it leaves the
 * rules as they were; what of the file does not apply to what a tool
 * prints is logged as a warning each time.
 */
#include <stdio.h>

#include "cli/log.h"
#include "cli/serve_catalog.h"
#include "toolgate/gate.h"
#include "toolgate/redact.h"

static void said(const char *path, struct tg_redact_ruleset *rs, const char *verb)
{
	const char *const *ids, *const *n;
	size_t count = tg_redact_ruleset_ids(rs, &ids);

	for (n = tg_redact_ruleset_notes(rs); *n; n++)
		cli_log(CLI_WARNING, "serve", "redaction rules: %s", *n);
	cli_log(CLI_INFO, "serve", "%s %s: %zu redaction rules beside the built-in ones", verb, path,
		count);
}

int serve_redact_load(const char *path, int quiet, struct tg_error *err)
{
	struct tg_redact_ruleset *rs;

	if (!path)
		return 0;
	if (tg_redact_ruleset_load(path, &rs, err) < 0)
		return tg_error_wrap(err, "--redact-gitleaks (redact-gitleaks)");
	if (!quiet)
		said(path, rs, "loaded");
	tg_redact_use(rs);
	tg_redact_ruleset_free(rs);
	return 0;
}

void serve_redact_reload(const char *path, struct tg_gate *gate)
{
	struct tg_error err;
	struct tg_redact_ruleset *rs;

	if (!path)
		return;
	if (tg_redact_ruleset_load(path, &rs, &err) < 0) {
		cli_log(CLI_ERROR, "serve", "reload: %s; still redacting with the rules as they were",
			err.msg);
		tg_gate_record_event(gate, "", path, "load_refused", err.msg);
		return;
	}
	said(path, rs, "reloaded");
	tg_redact_use(rs);
	tg_redact_ruleset_free(rs);
}
