/*
 * What only the files of src/skills/ share (include/toolgate/skill.h is
 * the contract): the check of a file's name (load.c, manifest.c), and
 * the scanner's (rules*.c, scan.c, deps.c, words.c, sarif.c) compiled
 * rules and the file classes rules apply to.
 */
#ifndef TG_SKILLS_SKILL_INT_H
#define TG_SKILLS_SKILL_INT_H

#include <stdint.h>

#include "toolgate/skill.h"
#include "util/pcre2.h"

/* What a file is, for the rules (a mask). */
enum {
	FILE_TEXT = 1, /* prose: SKILL.md, Markdown, text, references without a code suffix */
	FILE_CODE = 2, /* scripts, and configuration a script reads */
	FILE_ANY = FILE_TEXT | FILE_CODE,
};

/* A rule that matches text: a pattern (PCRE2) over a file's bytes. Rules
 * that are code (hidden characters, secrets, dependencies) have no
 * pattern: their findings are the scanner's own, under the same ids. */
struct skill_rule {
	char *id, *family, *description;
	enum tg_severity severity;
	unsigned files;	  /* FILE_* */
	int teaching;	  /* in prose, reported as low: 1 quoted or beside a caution,
			   * 2 quoted only */
	int off;	  /* turned off by the operator's file */
	char *pattern;	  /* its text, NULL for a code rule */
	const char *need; /* a built-in rule's words, one of which a file must have
			   * (ASCII lower case, |-separated), or NULL: rules_builtin.c */
	uint64_t need_mask[8]; /* those words' numbers in the rules' automaton */
	pcre2_code *re;	  /* compiled; NULL for a code rule */
};

/* The automaton of every rule's words (words.c). */
#define WORDS_BITS 512
struct words {
	uint16_t (*go)[256];
	uint64_t (*out)[WORDS_BITS / 64];
	size_t states;
};
/* The automaton of rules' words, each rule's need_mask set: 0, or -1 (no
 * memory, or more than WORDS_BITS words or its states: a built-in table's
 * mistake). */
int words_build(struct words *w, struct skill_rule *rules, size_t n);
void words_release(struct words *w);
/* The words in text[0, len) (lower case already) as bits into found. */
void words_scan(const struct words *w, const char *text, size_t len, uint64_t *found);

struct tg_skill_rules {
	struct skill_rule *r;
	size_t n;
	struct words words;
};

/* 1 if s[0, len) (UTF-8) holds a character no file name of a skill may:
 * a C1 control (U+0080-U+009F: a terminal acts on them as on ESC), a bidi
 * control (U+202A-U+202E, U+2066-U+2069: Trojan Source) or a line or
 * paragraph separator. C0 and DEL are the callers' own checks. */
int skill_name_hidden(const char *s, size_t len);

/* The rule of id, or NULL (an operator may turn a code rule off). */
const struct skill_rule *rules_find(const struct tg_skill_rules *rules, const char *id);

/* The dependency rules over one file of a skill (deps.c), code (a script
 * or a requirements file: every rule) or prose (typo-squats and indexes
 * only: a document names packages without versions): each finding added
 * with add(ctx, rule id, offset, length, note). 0, or add's -1. */
typedef int (*deps_add)(void *ctx, const char *rule, size_t at, size_t len, const char *note);
int deps_scan(const char *path, const char *text, size_t len, int code, deps_add add, void *ctx);

#endif
