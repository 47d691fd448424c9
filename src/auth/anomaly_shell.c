/*
 * Parameter anomalies, the shell rule (docs/ANOMALIES.md "The string
 * rules"): a command word after a separator or inside a substitution, and
 * only with what an attack gives that command. Reads the string only;
 * must never run anything.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "auth/anomaly_int.h"
#include "auth/anomaly_text.h"

/*
 * A command word counts after a separator (; && || | & newline, plain or
 * %-encoded), inside $( ) or a backquote pair, or in <( ); and only with
 * what that command is given in an attack, so that "first; second", a
 * markdown table "| id | name |" or "; cat food" are not commands. What
 * follows a word may be:
 *
 *   S_END   nothing: the string's end, a newline, ; & # ) ` < >
 *   S_OPT   an option (-rf, -c)       S_PATH  a path (/etc/passwd, ~/.x, $HOME)
 *   S_HOST  a host or URL             S_NUM   a number
 *   S_QUOTE a quoted or $ argument    S_ANY   any word
 *   S_NUMEND a number, then nothing (sleep 5)
 */
enum {
	S_END = 1 << 0,
	S_OPT = 1 << 1,
	S_PATH = 1 << 2,
	S_HOST = 1 << 3,
	S_NUM = 1 << 4,
	S_QUOTE = 1 << 5,
	S_ANY = 1 << 6,
	S_NUMEND = 1 << 7,
	S_NOCASE = 1 << 8, /* a Windows command, named in any case, ".exe" or not */
};

static const struct {
	const char *name;
	unsigned after;
} commands[] = {
	{ "sh", S_END | S_OPT | S_PATH },        { "bash", S_END | S_OPT | S_PATH },
	{ "zsh", S_END | S_OPT | S_PATH },       { "ksh", S_END | S_OPT | S_PATH },
	{ "dash", S_END | S_OPT | S_PATH },      { "csh", S_END | S_OPT | S_PATH },
	{ "busybox", S_ANY },                    { "curl", S_OPT | S_PATH | S_HOST | S_QUOTE },
	{ "wget", S_OPT | S_PATH | S_HOST | S_QUOTE },
	{ "nc", S_OPT | S_HOST | S_NUM },        { "ncat", S_OPT | S_HOST | S_NUM },
	{ "netcat", S_OPT | S_HOST | S_NUM },    { "socat", S_OPT | S_HOST | S_NUM | S_ANY },
	{ "telnet", S_OPT | S_HOST | S_NUM },    { "python", S_OPT | S_PATH },
	{ "python2", S_OPT | S_PATH },           { "python3", S_OPT | S_PATH },
	{ "perl", S_OPT | S_PATH },              { "ruby", S_OPT | S_PATH },
	{ "php", S_OPT | S_PATH },               { "node", S_OPT | S_PATH },
	{ "lua", S_OPT | S_PATH },               { "powershell", S_OPT | S_PATH | S_NOCASE },
	{ "pwsh", S_OPT | S_PATH | S_NOCASE },   { "cmd", S_OPT | S_PATH | S_NOCASE },
	{ "rm", S_OPT | S_PATH },                { "chmod", S_ANY },
	{ "chown", S_ANY },                      { "chgrp", S_ANY },
	{ "cat", S_PATH },                       { "head", S_PATH },
	{ "tail", S_PATH },                      { "tac", S_PATH },
	{ "less", S_PATH },                      { "more", S_PATH },
	{ "xxd", S_PATH },                       { "strings", S_PATH },
	{ "tee", S_PATH },                       { "touch", S_PATH },
	{ "echo", S_QUOTE | S_NUM },             { "printf", S_QUOTE },
	{ "eval", S_QUOTE | S_PATH | S_OPT },    { "exec", S_QUOTE | S_PATH | S_OPT },
	{ "base64", S_END | S_OPT | S_PATH },    { "id", S_END | S_OPT },
	{ "whoami", S_END | S_OPT },             { "uname", S_END | S_OPT },
	{ "hostname", S_END | S_OPT },           { "ifconfig", S_END | S_OPT },
	{ "ipconfig", S_END | S_OPT | S_NOCASE }, { "pwd", S_END },
	{ "env", S_END },                        { "printenv", S_END },
	{ "ls", S_END | S_OPT | S_PATH },        { "mkfifo", S_PATH },
	{ "mknod", S_PATH },                     { "ping", S_OPT | S_HOST },
	{ "nslookup", S_HOST },                  { "dig", S_HOST },
	{ "sleep", S_NUMEND },                   { "crontab", S_OPT | S_PATH },
	{ "nohup", S_ANY },                      { "xterm", S_OPT },
	{ "kill", S_OPT },
};

static size_t shell_blank(const struct text *t, size_t i)
{
	if (i < t->n && (t->s[i] == ' ' || t->s[i] == '\t'))
		return 1;
	if (i + 3 <= t->n && t->s[i] == '%' && t->s[i + 1] == '2' && t->s[i + 2] == '0')
		return 3;
	return 0;
}

static size_t shell_blanks(const struct text *t, size_t i)
{
	size_t k = i, b;

	while (k - i < 32 && (b = shell_blank(t, k)) != 0)
		k += b;
	return k;
}

/* Nothing more to the command at i: see S_END. */
static int shell_end(const struct text *t, size_t i)
{
	if (i < t->n && t->s[i] == '|')
		return 1; /* "id|", not "id |" which is a table's cell */
	i = shell_blanks(t, i);
	return i == t->n || one_of(t->s[i], ";&#)`<>\n\r");
}

/* What the argument s[0, n) may be, as S_ bits. */
static unsigned shell_arg(const unsigned char *s, size_t n)
{
	unsigned bits = S_ANY;
	size_t k;

	if (!n || s[0] == '|')
		return 0;
	if (s[0] == '-' && n > 1 && (is_alpha(s[1]) || s[1] == '-'))
		bits |= S_OPT;
	if (one_of(s[0], "/~$") || (s[0] == '.' && n > 1 && one_of(s[1], "./")) || memchr(s, '/', n))
		bits |= S_PATH;
	if (is_digit(s[0]))
		bits |= S_NUM | S_HOST;
	if (one_of(s[0], "\"'$"))
		bits |= S_QUOTE;
	for (k = 1; k + 1 < n; k++)
		if (s[k] == '.' || s[k] == ':')
			bits |= S_HOST;
	return bits;
}

/* Whether what follows the command word (at i) is what after allows. */
static int shell_args(const struct text *t, size_t i, unsigned after)
{
	size_t k = shell_blanks(t, i), a;

	if (shell_end(t, i))
		return (after & S_END) != 0;
	if (k == i)
		return 0; /* "rm-rf": not a command and its argument */
	for (a = k; a < t->n && a - k < 64 && !is_blank(t->s[a]); a++) {
	}
	if ((after & S_NUMEND) && is_digit(t->s[k]) && shell_end(t, a)) {
		while (k < a && is_digit(t->s[k]))
			k++;
		return k == a;
	}
	return (shell_arg(t->s + k, a - k) & after & ~(unsigned)S_END) != 0;
}

/* The command named at i (after a /bin/ or /usr/bin/ of its path); OUT
 * *end after its name. -1 for none. */
static int shell_command(const struct text *t, size_t i, size_t *end)
{
	static const char *const dirs[] = { "/usr/local/bin/", "/usr/bin/", "/usr/sbin/", "/bin/",
					    "/sbin/" };
	const unsigned char *s = t->s;
	size_t j, k, d;

	for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++)
		if (t->n - i >= strlen(dirs[d]) && memcmp(s + i, dirs[d], strlen(dirs[d])) == 0) {
			i += strlen(dirs[d]);
			break;
		}
	for (j = i; j < t->n && j - i < 16 && is_word(s[j]); j++) {
	}
	if (j == i || (j < t->n && is_word(s[j])))
		return -1;
	for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		size_t len = strlen(commands[k].name);

		if (len != j - i)
			continue;
		if (commands[k].after & S_NOCASE) {
			if (!same_lower(s + i, commands[k].name, len))
				continue;
			if (j + 4 <= t->n && same_lower(s + j, ".exe", 4))
				j += 4;
		} else if (memcmp(s + i, commands[k].name, len) != 0) {
			continue;
		}
		*end = j;
		return (int)k;
	}
	return -1;
}

/* The separator at i, its length; 0 for none. */
static size_t shell_separator(const struct text *t, size_t i)
{
	const unsigned char *s = t->s;
	size_t k;

	if (s[i] == '&' || s[i] == '|')
		return i + 1 < t->n && s[i + 1] == s[i] ? 2 : 1;
	if (s[i] == '\n' || s[i] == '\r')
		return 1;
	if (s[i] == ';') {
		/* the end of an HTML entity (&lt;) is not one */
		for (k = i; k > 0 && i - k < 10 && (is_word(s[k - 1]) || s[k - 1] == '#'); k--) {
		}
		return k > 0 && k < i && s[k - 1] == '&' ? 0 : 1;
	}
	if (s[i] == '%' && i + 3 <= t->n &&
	    (same_lower(s + i + 1, "0a", 2) || same_lower(s + i + 1, "0d", 2) ||
	     same_lower(s + i + 1, "3b", 2) || same_lower(s + i + 1, "7c", 2) ||
	     same_lower(s + i + 1, "26", 2)))
		return 3;
	return 0;
}

/* A command after the separator at i. */
static int shell_chained(const struct text *t, size_t i)
{
	size_t sep = shell_separator(t, i), j, end;
	int k;

	if (!sep)
		return 0;
	j = shell_blanks(t, i + sep);
	if (j >= t->n || (k = shell_command(t, j, &end)) < 0)
		return 0;
	return shell_args(t, end, commands[k].after);
}

/* $( command ... ), and <( ) or >( ): a command word, then ')' within
 * reach. "$(5)", "$((1+2))" and Makefile's "$(CC)" are not. */
static int shell_substitution(const struct text *t, size_t i)
{
	size_t j = shell_blanks(t, i + 2), end, k;

	if (shell_command(t, j, &end) < 0)
		return 0;
	for (k = end; k < t->n && k - end < 512; k++)
		if (t->s[k] == ')')
			return 1;
	return 0;
}

/* `command`: a backquote pair around a command, stuck to a word or a
 * separator, or the whole string. "run `ls -la`" in markdown is not. */
static int shell_backquote(const struct text *t, size_t i, size_t *next)
{
	const unsigned char *s = t->s;
	size_t c, end, from = 0, to = t->n, b;

	for (c = i + 1; c < t->n && c - i < 256 && s[c] != '`'; c++) {
	}
	(void)next; /* what the pair holds is looked at too: "`curl x | sh`" */
	if (c >= t->n || s[c] != '`')
		return 0;
	if (shell_command(t, shell_blanks(t, i + 1), &end) < 0)
		return 0;
	while (from < t->n && is_blank(s[from]))
		from++;
	while (to > from && is_blank(s[to - 1]))
		to--;
	if (from == i && to == c + 1)
		return 1;
	for (b = i; b > 0 && i - b < 8 && s[b - 1] == ' '; b--) {
	}
	if (i > 0 && (is_word(s[i - 1]) || one_of(s[i - 1], "=\"'$")))
		return 1;
	if (b > 0 && one_of(s[b - 1], ";&"))
		return 1;
	return c + 1 < t->n && (is_word(s[c + 1]) || one_of(s[c + 1], ";&"));
}

/* $IFS, ${IFS}, ${PATH:0:1}, ${@} and w$@hoami: expansions that stand for
 * blanks or cut words, used to slip commands past filters. */
static int shell_expansion(const struct text *t, size_t i)
{
	const unsigned char *s = t->s;
	size_t left = t->n - i, k;

	if (left >= 4 && memcmp(s + i, "$IFS", 4) == 0 && (left == 4 || !is_word(s[i + 4])))
		return 1;
	if (left >= 3 && s[i + 1] == '@' && i > 0 && is_word(s[i - 1]) && is_word(s[i + 2]))
		return 1;
	if (left < 4 || s[i + 1] != '{')
		return 0;
	if (left >= 5 && memcmp(s + i + 2, "IFS", 3) == 0)
		return 1;
	if (one_of(s[i + 2], "@*") && s[i + 3] == '}')
		return 1;
	for (k = i + 2; k < t->n && k - i < 34 && (is_word(s[k])); k++) {
	}
	return k > i + 2 && k + 1 < t->n && s[k] == ':' && (is_digit(s[k + 1]) || s[k + 1] == '-');
}

/* > or >> into an absolute path or the home directory; /dev/null and the
 * like are harmless. Not "->", "=>", "<b>/x" (markup), "cost > 5", nor a
 * line's leading ">" (a quote in markdown and mail). */
static int shell_redirect(const struct text *t, size_t i)
{
	static const char *const harmless[] = { "/dev/null", "/dev/stdout", "/dev/stderr",
						"/dev/fd/" };
	const unsigned char *s = t->s;
	size_t j = i + 1, k;
	unsigned char prev = i > 0 ? s[i - 1] : '\n';

	if (prev == '>' || prev == '-' || prev == '=' || prev == '<' || is_alpha(prev) ||
	    one_of(prev, "\"'/"))
		return 0;
	for (k = i; k > 0 && i - k < 64 && (s[k - 1] == ' ' || s[k - 1] == '\t'); k--) {
	}
	if (k == 0 || s[k - 1] == '\n' || s[k - 1] == '\r')
		return 0;
	if (j < t->n && one_of(s[j], ">|&"))
		j++;
	j = shell_blanks(t, j);
	for (k = 0; k < sizeof(harmless) / sizeof(harmless[0]); k++)
		if (t->n - j >= strlen(harmless[k]) && memcmp(s + j, harmless[k], strlen(harmless[k])) == 0)
			return 0;
	if (j + 2 <= t->n && s[j] == '~' && s[j + 1] == '/')
		return 1;
	if (j + 6 <= t->n && memcmp(s + j, "$HOME/", 6) == 0)
		return 1;
	return j + 2 <= t->n && s[j] == '/' && (is_alpha(s[j + 1]) || s[j + 1] == '.');
}

/* What kind of shell construct starts at i; NULL for none. *next: where to
 * look next. */
static const char *shell_at(const struct text *t, size_t i, size_t *next)
{
	const unsigned char *s = t->s;
	size_t left = t->n - i;

	*next = i + 1;
	switch (s[i]) {
	case '$':
		if (left >= 3 && s[i + 1] == '(' && s[i + 2] != '(' && shell_substitution(t, i))
			return "command substitution";
		return shell_expansion(t, i) ? "shell expansion" : NULL;
	case '`':
		return shell_backquote(t, i, next) ? "backquoted command" : NULL;
	case '<':
		return left >= 2 && s[i + 1] == '(' && shell_substitution(t, i) ? "process substitution"
										  : NULL;
	case '>':
		if (left >= 2 && s[i + 1] == '(' && shell_substitution(t, i))
			return "process substitution";
		return shell_redirect(t, i) ? "redirection into a file" : NULL;
	case '/':
		return left >= 9 && (memcmp(s + i, "/dev/tcp/", 9) == 0 ||
				     memcmp(s + i, "/dev/udp/", 9) == 0)
			       ? "network redirection"
			       : NULL;
	}
	return shell_chained(t, i) ? "command after a separator" : NULL;
}

int anomaly_rule_shell(const struct text *t, char *why, size_t cap)
{
	size_t i, next;
	const char *what;

	for (i = 0; i < t->n; i = next)
		if ((what = shell_at(t, i, &next)) != NULL) {
			anomaly_say(why, cap, what, t, i, EXCERPT_MAX);
			return 1;
		}
	return 0;
}
