/*
 * The unit tests' allocator shim (failalloc.h): the unit-test binary alone
 * is linked with -Wl,--wrap for each allocating call the library makes
 * (Makefile, UNIT_WRAP), so a reference to malloc in any of its objects
 * reaches __wrap_malloc here, which counts the allocation and fails the
 * armed one, and calls __real_malloc (libc's, or ASan's interceptor, so
 * LeakSanitizer still sees every block) otherwise. What it cannot reach,
 * the allocations libc and the shared libraries make for themselves (a
 * FILE, a DIR, PCRE2, libsodium, ...), is listed in tests/README.md.
 * Disarmed, it only forwards: the other unit tests run through it too.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "failalloc.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
char *__real_realpath(const char *path, char *resolved);
int __real_posix_memalign(void **p, size_t align, size_t size);

void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
char *__wrap_realpath(const char *path, char *resolved);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
int __wrap_asprintf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int __wrap___asprintf_chk(char **out, int flag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
json_t *__real_json_loads(const char *text, size_t flags, json_error_t *error);
json_t *__real_json_loadb(const char *text, size_t len, size_t flags, json_error_t *error);
json_t *__real_json_load_file(const char *path, size_t flags, json_error_t *error);
char *__real_json_dumps(const json_t *json, size_t flags);
json_t *__wrap_json_loads(const char *text, size_t flags, json_error_t *error);
json_t *__wrap_json_loadb(const char *text, size_t len, size_t flags, json_error_t *error);
json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error);
char *__wrap_json_dumps(const json_t *json, size_t flags);

/* Atomic: a call may allocate from its helper threads too (the gate's). */
static int armed;
static unsigned long fail_at, count, failed;
/* Inside a jansson parser or dumper (below): its allocations pass. */
static __thread int in_jansson;

void failalloc_arm(unsigned long n)
{
	__atomic_store_n(&count, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&failed, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&fail_at, n, __ATOMIC_SEQ_CST);
	__atomic_store_n(&armed, 1, __ATOMIC_SEQ_CST);
}

unsigned long failalloc_disarm(void)
{
	__atomic_store_n(&armed, 0, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&count, __ATOMIC_SEQ_CST);
}

int failalloc_failed(void)
{
	return __atomic_load_n(&failed, __ATOMIC_SEQ_CST) != 0;
}

int failalloc_next(void)
{
	unsigned long n;

	if (!__atomic_load_n(&armed, __ATOMIC_RELAXED) || in_jansson)
		return 0;
	n = __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST);
	if (n != __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST))
		return 0;
	__atomic_store_n(&failed, 1, __ATOMIC_SEQ_CST);
	return 1;
}

void *failalloc_malloc(size_t size)
{
	return __wrap_malloc(size);
}

void *__wrap_malloc(size_t size)
{
	if (failalloc_next()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
	if (failalloc_next()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	if (failalloc_next()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_realloc(p, size);
}

char *__wrap_strdup(const char *s)
{
	if (failalloc_next()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	if (failalloc_next()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_strndup(s, n);
}

/* Only realpath(path, NULL) allocates; with a buffer it is left alone. */
char *__wrap_realpath(const char *path, char *resolved)
{
	if (!resolved && failalloc_next()) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_realpath(path, resolved);
}

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	if (failalloc_next())
		return ENOMEM;
	return __real_posix_memalign(p, align, size);
}

/* asprintf, and what -D_FORTIFY_SOURCE makes of it (the plain build):
 * both end in libc's vasprintf, which this file does not wrap. */
static int vasprintf_counted(char **out, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
static int vasprintf_counted(char **out, const char *fmt, va_list ap)
{
	if (failalloc_next()) {
		errno = ENOMEM;
		return -1; /* *out left as it was: libc's is undefined then */
	}
	return vasprintf(out, fmt, ap);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf_counted(out, fmt, ap);
	va_end(ap);
	return n;
}

int __wrap___asprintf_chk(char **out, int flag, const char *fmt, ...)
{
	va_list ap;
	int n;

	(void)flag;
	va_start(ap, fmt);
	n = vasprintf_counted(out, fmt, ap);
	va_end(ap);
	return n;
}

/* jansson 2.14 mishandles its own allocation failures while it parses
 * (lex_save drops one, then an assertion aborts or a string comes back
 * cut: akheron/jansson#362) and while it dumps (a string left out of the
 * text: #655). So its parsers and its dumper count as one allocation,
 * which fails them whole as a correct jansson would, and the allocations
 * inside them pass. Its other calls (json_object, json_pack, ...) fail
 * cleanly and are counted one allocation at a time. */
static int jansson_fails(json_error_t *error)
{
	if (!failalloc_next())
		return 0;
	if (error) {
		memset(error, 0, sizeof(*error));
		snprintf(error->text, sizeof(error->text), "out of memory");
		error->text[JSON_ERROR_TEXT_LENGTH - 1] = json_error_out_of_memory;
		error->line = error->column = -1;
	}
	return 1;
}

json_t *__wrap_json_loads(const char *text, size_t flags, json_error_t *error)
{
	json_t *v;

	if (jansson_fails(error))
		return NULL;
	in_jansson++;
	v = __real_json_loads(text, flags, error);
	in_jansson--;
	return v;
}

json_t *__wrap_json_loadb(const char *text, size_t len, size_t flags, json_error_t *error)
{
	json_t *v;

	if (jansson_fails(error))
		return NULL;
	in_jansson++;
	v = __real_json_loadb(text, len, flags, error);
	in_jansson--;
	return v;
}

json_t *__wrap_json_load_file(const char *path, size_t flags, json_error_t *error)
{
	json_t *v;

	if (jansson_fails(error))
		return NULL;
	in_jansson++;
	v = __real_json_load_file(path, flags, error);
	in_jansson--;
	return v;
}

char *__wrap_json_dumps(const json_t *json, size_t flags)
{
	char *text;

	if (jansson_fails(NULL))
		return NULL;
	in_jansson++;
	text = __real_json_dumps(json, flags);
	in_jansson--;
	return text;
}
