/*
 * Errors on the way up (include/toolgate/error.h): tg_error_wrap adds
 * context and keeps the code and errno beneath it; a thread or a pipe the
 * library could not make is reported with the errno the system gave.
 * Failures are injected in the test's own process (each test is forked):
 * a default thread stack no address space holds, a descriptor limit
 * already reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "toolgate/audit.h"
#include "toolgate/egress.h"
#include "toolgate/error.h"
#include "toolgate/sandbox.h"
#include "toolgate/trace.h"
#include "unit.h"

/* err is a system error of errnum whose message reads "what: strerror". */
static int sys_said(const struct tg_error *err, int errnum, const char *what)
{
	char want[600];

	snprintf(want, sizeof(want), "%s: %s", what, strerror(errnum));
	if (err->code == TG_ERR_SYSTEM && err->sys_errno == errnum && strstr(err->msg, want))
		return 1;
	fprintf(stderr, "code %d, errno %d: %s\n", err->code, err->sys_errno, err->msg);
	return 0;
}

static int wrap(void)
{
	struct tg_error err;
	char ctx[301];

	tg_error_sys(&err, ENOENT, "open %s", "/nope");
	CHECK(tg_error_wrap(&err, "--ro %s", "/nope") == -1);
	CHECK(err.code == TG_ERR_SYSTEM && err.sys_errno == ENOENT);
	CHECK(strcmp(err.msg, "--ro /nope: open /nope: No such file or directory") == 0);
	/* a context longer than 255 bytes (a long path) is not cut short */
	memset(ctx, 'p', sizeof(ctx) - 1);
	ctx[sizeof(ctx) - 1] = '\0';
	tg_error_set(&err, TG_ERR_LIMIT, "too big");
	tg_error_wrap(&err, "contract %s: input_schema", ctx);
	CHECK(err.code == TG_ERR_LIMIT && strstr(err.msg, ctx) &&
	      strstr(err.msg, ": input_schema: too big"));
	tg_error_wrap(NULL, "nothing to wrap");
	return 0;
}

/* pthread_create with default attributes fails from here on, EAGAIN: a
 * stack of 128 TiB fits no x86-64 or arm64 user address space. */
static int no_threads(void)
{
	pthread_attr_t a;
	int rc;

	if (pthread_attr_init(&a) != 0)
		return -1;
	rc = pthread_attr_setstacksize(&a, (size_t)1 << 47);
	if (rc == 0)
		rc = pthread_setattr_default_np(&a);
	pthread_attr_destroy(&a);
	return rc == 0 ? 0 : -1;
}

static int thread(void)
{
	char dir[64], path[128];
	char *argv[] = { "/bin/true", NULL };
	const char *rules[] = { "127.0.0.1:1" };
	struct tg_egress_proxy_options o;
	struct tg_sandbox_pool *pool = NULL;
	struct tg_egress_proxy *proxy = NULL;
	struct tg_sandbox_spec *spec = unit_spec();
	struct tg_tracer_options to = { .endpoint = "http://127.0.0.1:1/v1/traces" };
	struct tg_tracer *tracer = NULL;
	struct tg_audit *a = NULL;
	struct tg_error err;

	CHECK(spec && tg_sandbox_spec_set_argv(spec, 1, argv, NULL) == 0);
	CHECK(unit_tmpdir(dir, "errors") == 0);
	CHECK(no_threads() == 0);

	snprintf(path, sizeof(path), "%s/audit.log", dir);
	CHECK(tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0 && !a);
	CHECK(sys_said(&err, EAGAIN, "audit log: its writer thread"));

	CHECK(tg_sandbox_pool_new(spec, 1, 0, &pool, &err) < 0 && !pool);
	CHECK(sys_said(&err, EAGAIN, "warm pool: its refill thread"));

	memset(&o, 0, sizeof(o));
	o.rules = rules;
	o.nrules = 1;
	snprintf(path, sizeof(path), "%s/proxy.sock", dir);
	o.socket_path = path;
	CHECK(tg_egress_proxy_start(&o, &proxy, &err) < 0 && !proxy);
	CHECK(sys_said(&err, EAGAIN, "egress proxy: its accepting thread"));

	CHECK(tg_tracer_new(&to, &tracer, &err) < 0 && !tracer);
	CHECK(sys_said(&err, EAGAIN, "tracer: its exporter thread"));

	tg_sandbox_spec_free(spec);
	unit_rmtree(dir);
	return 0;
}

/* A proxy's stop pipe with every descriptor the process may have in use:
 * EMFILE, said, not "out of memory". */
static int pipe_full(void)
{
	const char *rules[] = { "127.0.0.1:1" };
	struct tg_egress_proxy_options o;
	struct tg_egress_proxy *proxy = NULL;
	struct tg_error err;
	struct rlimit rl, was;
	int lowest = open("/dev/null", O_RDONLY | O_CLOEXEC), rc;

	/* every descriptor below the lowest free one is taken */
	CHECK(lowest >= 0 && close(lowest) == 0);
	CHECK(getrlimit(RLIMIT_NOFILE, &was) == 0);
	rl = was;
	rl.rlim_cur = (rlim_t)lowest;
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	memset(&o, 0, sizeof(o));
	o.rules = rules;
	o.nrules = 1;
	rc = tg_egress_proxy_start(&o, &proxy, &err);
	/* the limit back: LeakSanitizer opens files at exit */
	CHECK(setrlimit(RLIMIT_NOFILE, &was) == 0);
	CHECK(rc < 0 && !proxy);
	CHECK(sys_said(&err, EMFILE, "egress proxy: its stop pipe"));
	return 0;
}

const struct unit_test errors_tests[] = {
	{ "errors/wrap", wrap },
	{ "errors/thread", thread },
	{ "errors/pipe_full", pipe_full },
	UNIT_TESTS_END,
};
