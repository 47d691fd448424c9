/*
 * The built-in rules' table (src/skills/rules_builtin.c), compiled by
 * src/skills/rules.c.
 */
#ifndef TG_SKILLS_RULES_BUILTIN_H
#define TG_SKILLS_RULES_BUILTIN_H

#include <stddef.h>

#include "skills/skill_int.h"

struct builtin_rule {
	const char *id, *family;
	enum tg_severity severity;
	unsigned files;
	int teaching;
	const char *pattern; /* NULL: the scanner's code */
	const char *description;
};

extern const struct builtin_rule builtin_rules[];
extern const size_t builtin_rules_n;

struct builtin_need {
	const char *id, *words;
};
extern const struct builtin_need builtin_needs[];
extern const size_t builtin_needs_n;

#endif
