/*
 * What the gateway makes of a skill (tg_skill_judge,
 * include/toolgate/skill.h; docs/SKILLS.md, "Enforcement"): its
 * signature checked against the trust store, then its files scanned, a
 * finding at or above high refusing it. One judgement for `serve
 * --skills` and for `skill install|list|show`, so that what an operator
 * is told would be served is what is served.
 */
#include <stdio.h>
#include <string.h>

#include "toolgate/skill.h"

int tg_skill_judge(const struct tg_skill *skill, const struct tg_trust *trust,
		   const struct tg_skill_rules *rules, time_t now,
		   struct tg_skill_judgement *out, struct tg_error *err)
{
	const struct tg_skill_report *r = &out->report;

	memset(out, 0, sizeof(*out));
	tg_error_clear(&out->verify);
	if (trust)
		out->verdict = tg_skill_verify(skill, trust, now, out->publisher,
					       sizeof(out->publisher), &out->verify);
	if (tg_skill_scan(skill, rules, &out->report, err) < 0)
		return -1;
	for (size_t i = 0; r->worst >= TG_SEVERITY_HIGH && i < r->n; i++)
		if (r->findings[i].severity >= TG_SEVERITY_HIGH) {
			snprintf(out->scan, sizeof(out->scan), "%zu finding%s, the first %s %s at "
				 "%s:%u", r->total, r->total == 1 ? "" : "s",
				 tg_severity_name(r->findings[i].severity), r->findings[i].rule,
				 r->findings[i].path, r->findings[i].line);
			break;
		}
	if (r->worst >= TG_SEVERITY_HIGH && !out->scan[0]) /* those kept were lower */
		snprintf(out->scan, sizeof(out->scan), "%zu findings, the worst %s", r->total,
			 tg_severity_name(r->worst));
	return 0;
}

const char *tg_skill_judgement_reason(const struct tg_skill_judgement *j, const char **why)
{
	if (j->verdict != TG_VERDICT_OK) {
		*why = j->verify.msg;
		return tg_verdict_name(j->verdict);
	}
	*why = j->scan;
	return j->scan[0] ? "scan" : NULL;
}

void tg_skill_judgement_release(struct tg_skill_judgement *j)
{
	tg_skill_report_release(&j->report);
}
