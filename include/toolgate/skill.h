/*
 * toolgate: Agent Skills (docs/SKILLS.md).
 *
 * A skill is a folder: SKILL.md (YAML frontmatter, then Markdown), and
 * optionally scripts/, references/ and assets/, per the Agent Skills
 * standard. toolgate reads one without running anything: the frontmatter
 * checked field by field, every file of the folder walked with its size,
 * kind and SHA-256, each refusal naming the file and the reason. The
 * files' digests make the skill's manifest (SHA256SUMS, the format of
 * coreutils' sha256sum, sorted by path), which a publisher signs with
 * minisign (toolgate/sign.h) and an operator trusts by the publisher's key
 * (a trust store).
 */
#ifndef TOOLGATE_SKILL_H
#define TOOLGATE_SKILL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "toolgate/error.h"
#include "toolgate/sign.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ceilings (docs/SKILLS.md, "Limits"). */
#define TG_SKILL_MD_MAX (1u << 20)	   /* SKILL.md */
#define TG_SKILL_FRONTMATTER_MAX (64u << 10) /* its frontmatter */
#define TG_SKILL_FILE_MAX (8u << 20)	   /* any other file */
#define TG_SKILL_BYTES_MAX (64u << 20)	   /* all of a skill's files */
#define TG_SKILL_FILES_MAX 4096		   /* files in a skill */
#define TG_SKILL_DEPTH_MAX 16		   /* folders within folders */
#define TG_SKILL_PATH_MAX 1024		   /* a file's path in the skill */
#define TG_SKILL_METADATA_MAX 64	   /* entries of metadata */

/* The manifest and its signature, at the top of a skill's folder (not in
 * the manifest themselves). */
#define TG_SKILL_MANIFEST "SHA256SUMS"
#define TG_SKILL_SIGNATURE "SHA256SUMS.minisig"

/* One entry of metadata. */
struct tg_skill_pair {
	char *key, *value;
};

/* What SKILL.md's frontmatter says. */
struct tg_skill_meta {
	char name[65];
	char *description;   /* 1 to 1024 characters */
	char *license;	     /* NULL when not given */
	char *compatibility; /* NULL when not given; at most 500 characters */
	char *allowed_tools; /* NULL when not given; space-separated names */
	struct tg_skill_pair *metadata; /* in the file's order, n_metadata of them */
	size_t n_metadata;
	const char *version; /* metadata's "version", or NULL; points into metadata */
	size_t body;	     /* SKILL.md's byte offset where the body begins */
	unsigned body_line;  /* and its line, from 1 */
};

/* Parse SKILL.md's text[0, len): 0 and OUT *out filled (release it with
 * tg_skill_meta_release); or -1 and err saying what is wrong and on which
 * line ("line 3: field 'name' given twice"). Refused: text over
 * TG_SKILL_MD_MAX, not UTF-8 or with a NUL; no frontmatter between '---'
 * lines; YAML that is not one mapping; a field not in the standard, given
 * twice, or not a string (metadata: not a mapping of strings); an
 * anchor, an alias or a tag; a name or description breaking the
 * standard's rules. The name's match with its folder is tg_skill_load's
 * check. */
TG_API int tg_skill_frontmatter_parse(const char *text, size_t len, struct tg_skill_meta *out,
				      struct tg_error *err);
TG_API void tg_skill_meta_release(struct tg_skill_meta *meta);

/* One file of a skill. */
struct tg_skill_file {
	char *path; /* relative, '/'-separated, no '.' or '..' component */
	char *data; /* its bytes as read and hashed, NUL after them */
	uint64_t size;
	unsigned char sha256[32];
	int executable; /* any execute bit set */
	int link;	/* reached through a symbolic link inside the skill */
};

struct tg_skill {
	char *dir; /* as given */
	struct tg_skill_meta meta;
	const char *skill_md; /* SKILL.md's text, NUL-terminated (its file's data) */
	size_t skill_md_len;
	struct tg_skill_file *files; /* sorted by path (bytes), without the manifest
				      * and its signature */
	size_t n_files;
	uint64_t bytes; /* the files' sizes summed */
	char *manifest; /* the canonical manifest of files (tg_skill_manifest) */
	unsigned char digest[32]; /* its SHA-256: the skill's pin */
	/* the folder walked (fstat of the descriptor opened on dir): what
	 * writes into it later (sign) and reads of its manifest check they
	 * reach, so that dir swapped for a link since is refused */
	uint64_t dev, ino;
};

/* Read the skill in folder dir: 0 and *out (tg_skill_free it); or -1
 * with err naming the file and the reason. Refused, besides what
 * tg_skill_frontmatter_parse refuses: no SKILL.md; a name unlike the
 * folder's; a file over TG_SKILL_FILE_MAX, more than TG_SKILL_FILES_MAX
 * files or TG_SKILL_BYTES_MAX bytes in all, folders deeper than
 * TG_SKILL_DEPTH_MAX; a symbolic link leaving the folder, or to a folder;
 * a device, FIFO or socket; a name that is not UTF-8 or has a control
 * character or a backslash. Nothing in the folder is run or changed. */
TG_API int tg_skill_load(const char *dir, struct tg_skill **out, struct tg_error *err);
/* The same walk of any folder, without SKILL.md's checks (meta empty,
 * skill_md NULL unless it has one): a contract catalogue's, whose
 * manifest is signed and verified as a skill's (`toolgate catalog
 * sign|verify`). */
TG_API int tg_folder_load(const char *dir, struct tg_skill **out, struct tg_error *err);
TG_API void tg_skill_free(struct tg_skill *skill);

/* skill's file at path (relative, as in its files), or NULL. */
TG_API const struct tg_skill_file *tg_skill_file(const struct tg_skill *skill, const char *path);

/* skill's folder opened again (O_DIRECTORY, close-on-exec): its
 * descriptor, which the caller closes; or -1 and err, also when dir now
 * names another folder than the one tg_skill_load walked (swapped for a
 * link, renamed): what is written or read there by name goes into the
 * folder that was read, never one a link points to. */
TG_API int tg_skill_dir_open(const struct tg_skill *skill, struct tg_error *err);

/* One line of a manifest. */
struct tg_skill_entry {
	unsigned char sha256[32];
	char *path;
};

/* Parse a manifest, text[0, len): 0 with *out (n entries; free with
 * tg_skill_entries_free); or -1 and err naming the line. A manifest is
 * canonical or refused: one "HEX  PATH\n" a file (64 lowercase hex
 * digits, two spaces), sorted by path as bytes, each path once, no
 * '.' or '..' component, no leading '/', at most TG_SKILL_FILES_MAX
 * lines, what sha256sum writes and `sha256sum -c` reads. */
TG_API int tg_skill_manifest_parse(const char *text, size_t len, struct tg_skill_entry **out,
				   size_t *n, struct tg_error *err);
TG_API void tg_skill_entries_free(struct tg_skill_entry *entries, size_t n);

/* Compare skill's files with the manifest text[0, len): 0 when they are
 * the same files with the same digests; else -1 and err naming the first
 * difference ("scripts/run.sh: changed since the manifest was made",
 * "notes.md: not in the manifest", "assets/a.png: in the manifest, not in
 * the folder"). */
TG_API int tg_skill_manifest_check(const struct tg_skill *skill, const char *text, size_t len,
				   struct tg_error *err);

/* A trust store: the publishers' keys an operator trusts
 * (docs/SKILLS.md, "Trust store"). */
struct tg_trust_key {
	char *publisher;
	struct tg_sign_pub key;
	time_t expires; /* 0: never */
	time_t revoked; /* 0: not revoked */
	char *reason;	/* why it was revoked, or NULL */
};
struct tg_trust {
	struct tg_trust_key *keys;
	size_t n;
};

/* Read the trust store at path (a JSON file, at most 1 MiB): 0 and *out;
 * or -1 with err naming the file and the field. A missing file is an
 * error. */
TG_API int tg_trust_load(const char *path, struct tg_trust **out, struct tg_error *err);
TG_API int tg_trust_parse(const char *text, size_t len, const char *origin, struct tg_trust **out,
			  struct tg_error *err);
TG_API void tg_trust_free(struct tg_trust *trust);
/* The trust store as JSON text (malloc'd), or NULL on no memory. */
TG_API char *tg_trust_format(const struct tg_trust *trust);
/* A date as the store has them, "YYYY-MM-DD" (midnight UTC) or
 * "YYYY-MM-DDTHH:MM:SSZ", into OUT *t: 0, or -1 for anything else. */
TG_API int tg_trust_date(const char *s, time_t *t);
/* The key whose id is id, or NULL. */
TG_API const struct tg_trust_key *tg_trust_find(const struct tg_trust *trust,
						const unsigned char id[TG_SIGN_KEYID_LEN]);

/* Why a signed folder is not trusted. */
enum tg_verdict {
	TG_VERDICT_OK = 0,
	TG_VERDICT_UNSIGNED,  /* no manifest or no signature */
	TG_VERDICT_UNTRUSTED, /* signed by a key the store lacks, revoked or expired */
	TG_VERDICT_TAMPERED,  /* a signature that fails, or files unlike the manifest */
	TG_VERDICT_MALFORMED, /* a manifest or signature that cannot be read */
};
/* "ok", "unsigned", "untrusted", "tampered", "malformed": the reason label
 * of toolgate_blocked_loads_total. */
TG_API const char *tg_verdict_name(enum tg_verdict verdict);

/* Check the signature of skill: its folder's manifest signed (minisign) by
 * a key of trust, neither revoked nor expired at now, and its files those
 * of the manifest. Returns the verdict; err says why when it is not
 * TG_VERDICT_OK, and publisher[len] names the publisher whose key signed
 * (only with TG_VERDICT_OK: before its signature verifies, a key id is
 * anyone's claim; "" otherwise). */
TG_API enum tg_verdict tg_skill_verify(const struct tg_skill *skill, const struct tg_trust *trust,
				       time_t now, char *publisher, size_t len,
				       struct tg_error *err);

/* How bad a finding is. */
enum tg_severity {
	TG_SEVERITY_LOW = 1,
	TG_SEVERITY_MEDIUM,
	TG_SEVERITY_HIGH,
	TG_SEVERITY_CRITICAL,
};
/* "low", "medium", "high", "critical". */
TG_API const char *tg_severity_name(enum tg_severity severity);
/* The severity s names into OUT *out: 0, or -1. */
TG_API int tg_severity_parse(const char *s, enum tg_severity *out);

/* The scanner's rules (docs/SKILLS.md, "Scanning"): the built-in ones and
 * those of an operator's file, compiled. */
struct tg_skill_rules;

/* The built-in rules, then path's (a JSON file; NULL: none), which may add
 * rules and replace or turn off built-in ones by id: 0 and OUT *out; or -1
 * with err naming the file, the rule and the field (a pattern that does
 * not compile: where and why). */
TG_API int tg_skill_rules_new(const char *path, struct tg_skill_rules **out,
			      struct tg_error *err);
TG_API void tg_skill_rules_free(struct tg_skill_rules *rules);
/* The rules, as SARIF's reportingDescriptor objects would name them: the
 * count, and rule i's id, family, default severity and description. */
TG_API size_t tg_skill_rules_count(const struct tg_skill_rules *rules);
TG_API void tg_skill_rules_get(const struct tg_skill_rules *rules, size_t i, const char **id,
			       const char **family, enum tg_severity *severity,
			       const char **description);

/* The rules as JSON, the operator's file's format (every field, the
 * built-in rules' patterns among them; a code rule without one), malloc'd;
 * NULL when out of memory. */
TG_API char *tg_skill_rules_json(const struct tg_skill_rules *rules);

/* One finding. Its strings point into the rules and the skill scanned:
 * valid while both are. */
struct tg_skill_finding {
	const char *rule;    /* "remote-code/pipe-to-shell" */
	const char *family;  /* "remote-code" */
	enum tg_severity severity;
	const char *message; /* the rule's description */
	char note[96];	     /* "" or more about it: a count, a package's name, why its
			      * severity is not the rule's (text from the skill, unescaped) */
	const char *path;    /* the file in the skill; "SKILL.md#description" for the
			      * description as its YAML decodes it, when SKILL.md's
			      * bytes do not hold it so (escapes) */
	unsigned line, column; /* from 1; the column in characters (code points) */
	char excerpt[128];   /* its line in display form (util/hidden.h: every hidden
			      * character escaped, a backslash doubled); never a secret */
};

#define TG_SKILL_FINDINGS_MAX 1000 /* kept of a scan; more are counted */
#define TG_SKILL_SCAN_BUDGET_S 30  /* a scan stops after this, with a finding */

struct tg_skill_report {
	struct tg_skill_finding *findings; /* by file, then line; at most _MAX */
	size_t n;
	size_t total;		 /* found, counting those not kept */
	enum tg_severity worst;	 /* 0 when nothing was found */
	size_t files_scanned;	 /* text files read; binary ones are not */
};

/* Scan skill's files with rules, running nothing: OUT *out (release it
 * with tg_skill_report_release, also after a failure). -1 and err only
 * when memory runs out. */
TG_API int tg_skill_scan(const struct tg_skill *skill, const struct tg_skill_rules *rules,
			 struct tg_skill_report *out, struct tg_error *err);
TG_API void tg_skill_report_release(struct tg_skill_report *report);

/* What the gateway makes of a skill (docs/SKILLS.md, "Enforcement"):
 * its signature (verdict, and why in verify, when it is not
 * TG_VERDICT_OK; publisher the signer's name when it is), and its scan
 * (report; scan says why when a finding is at or above high, "" when
 * none is). */
struct tg_skill_judgement {
	enum tg_verdict verdict; /* TG_VERDICT_OK when no trust store was given */
	struct tg_error verify;
	char publisher[128];
	struct tg_skill_report report;
	char scan[600];
};

/* Judge skill: its signature against trust at now (trust NULL: not
 * looked at), then its files scanned with rules, both always (a skill
 * served in warn mode has every finding recorded). 0 and OUT *out
 * (release it with tg_skill_judgement_release, also after a failure); -1
 * and err only when memory runs out. */
TG_API int tg_skill_judge(const struct tg_skill *skill, const struct tg_trust *trust,
			  const struct tg_skill_rules *rules, time_t now,
			  struct tg_skill_judgement *out, struct tg_error *err);
/* Why a skill so judged is not served: NULL when it is; else the reason,
 * the verdict's name (the signature is looked at first) or "scan", and
 * *why the message (into j). */
TG_API const char *tg_skill_judgement_reason(const struct tg_skill_judgement *j,
					     const char **why);
TG_API void tg_skill_judgement_release(struct tg_skill_judgement *j);

/* Write skill's files, the bytes read and hashed, into the new folder dir
 * (made, mode 0755; its folders 0755, its files 0644 or 0755 when
 * executable, whatever the umask): 0, or -1 and err naming the path. No
 * link is followed and no file overwritten. With TG_SKILL_WRITE_MANIFEST
 * the skill's manifest too (its signature is the caller's to add); with
 * TG_SKILL_WRITE_SYNC each file synced before the next. */
#define TG_SKILL_WRITE_MANIFEST 1u
#define TG_SKILL_WRITE_SYNC 2u
TG_API int tg_skill_write(const struct tg_skill *skill, const char *dir, unsigned flags,
			  struct tg_error *err);

/* A skill's scripts as tools (docs/SKILLS.md, "Scripts as tools"): its
 * TG_SKILL_TOOLS_FILE, {"tools": [CONTRACT, ...]}, each a contract in the
 * catalogue's format (docs/contracts.md) of a command tool that runs one
 * of the skill's scripts. */
#define TG_SKILL_TOOLS_FILE "toolgate.json"
#define TG_SKILL_TOOLS_FILE_MAX (1u << 20)
#define TG_SKILL_TOOLS_MAX 64
#define TG_SKILL_MOUNT "/skill" /* where a tool finds its skill's files */
/* Why an egress rule of a skill's tool that names an address
 * (tg_egress_rule_is_address) is refused, by the gate and skill check. */
#define TG_SKILL_EGRESS_ADDRESS                                                       \
	"a skill's tool names the hosts it reaches, not an address (an address rule " \
	"opens even the host's loopback and the cloud's metadata service)"

struct tg_skill_tool {
	char *origin;	/* "DIR/toolgate.json: tools[I]", the contract's file */
	char *contract; /* its JSON text, for tg_contract_parse */
};

/* The tools skill declares, each checked against the skill's rules and
 * completed (the contract itself is its caller's to parse with
 * tg_contract_parse, without schema options: a reference reads no file): the
 * skill's files at TG_SKILL_MOUNT, read-only, from the folder host (where
 * the caller writes them, tg_skill_write), and the standard tier unless
 * it says strict. 0 and OUT *out, *n (0 and NULL when the skill has no
 * TG_SKILL_TOOLS_FILE); -1 and err naming the file, the tool and the
 * field: a file that is not {"tools": [...]} with 1 to TG_SKILL_TOOLS_MAX
 * contracts; a name outside the skill's own namespace (NAME.TOOL) or given
 * twice; an executor other than a command; executor.mounts (the skill's
 * files are all a tool is given of the host) or executor.state; an argv
 * that names none of the skill's files under scripts/ at TG_SKILL_MOUNT,
 * names one the skill lacks, or runs one that is not executable; a
 * compensation that is not a write tool of the skill. Release with
 * tg_skill_tools_free. */
TG_API int tg_skill_tools(const struct tg_skill *skill, const char *host,
			  struct tg_skill_tool **out, size_t *n, struct tg_error *err);
TG_API void tg_skill_tools_free(struct tg_skill_tool *tools, size_t n);

/* The report as SARIF 2.1.0 (JSON text, malloc'd; NULL when out of
 * memory): one run of the tool "toolgate", its rules, a result a finding,
 * each located in the skill's folder (uriBaseId SKILL, dir's absolute
 * path). n reports of n skills, as one run. */
TG_API char *tg_skill_sarif(const struct tg_skill *const *skills,
			    const struct tg_skill_report *reports, size_t n,
			    const struct tg_skill_rules *rules);

#ifdef __cplusplus
}
#endif

#endif
