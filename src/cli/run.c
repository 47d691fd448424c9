/*
 * toolgate run [options] -- CMD [ARGS...]: one command in the sandbox.
 *
 * Exit status: the command's; 128+N if a signal N ended it; 124 on
 * timeout; 125 when toolgate refused, the sandbox could not be set up or
 * the command line is wrong (as env(1): 2 could be the command's); 126
 * and 127 when the command could not be executed or found (docs/CLI.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "toolgate/egress.h"
#include "toolgate/sandbox.h"
#include "util/parse.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: toolgate run [options] -- CMD [ARGS...]\n"
		"\n"
		"  --tier strict|standard   isolation tier (default strict; standard with\n"
		"                           --allow-host)\n"
		"  --memory SIZE            memory limit (default 256M)\n"
		"  --cpus N                 CPU share, decimals allowed (default 1)\n"
		"  --pids N                 processes the command may have (default 64)\n"
		"  --timeout DURATION       wall-clock limit, e.g. 500ms, 10s, 2m (default 10s)\n"
		"  --ro HOST[:INSIDE]       bind a host path read-only\n"
		"  --rw HOST[:INSIDE]       bind a host path read-write\n"
		"  --workdir DIR            working directory inside (default /work, a tmpfs)\n"
		"  --env NAME=VALUE         set a variable; --env NAME passes the caller's value\n"
		"  --output-limit SIZE      cap on each of stdout and stderr (default 1M)\n"
		"  --tmpfs-size SIZE        size of /tmp and of the work directory (default 64M)\n"
		"  --cgroup-parent PATH     parent cgroup for a non-root caller\n"
		"  --host-uid UID[:GID]     a root caller's sandbox runs as this host user\n"
		"                           (default 65534, nobody)\n"
		"  --allow-host HOST:PORT   let the command reach HOST:PORT through the egress\n"
		"                           proxy (repeatable; standard tier; docs/EGRESS.md)\n"
		"  --json                   print the result as one JSON object\n"
		"\n"
		"Nothing from the caller's environment passes unless named with --env.\n"
		"Without --allow-host the command has no network at all.\n");
}

/* Ctrl-C, a terminal hang-up, kill(1), or a reader that went away all
 * end the run through the library's cancel fd (a self-pipe), so that the
 * sandbox and its cgroup are cleaned up before toolgate exits. */
static int cancel_pipe[2] = { -1, -1 };
static volatile sig_atomic_t cancel_signal;

static void on_signal(int sig)
{
	int saved = errno;

	if (!cancel_signal)
		cancel_signal = sig;
	if (write(cancel_pipe[1], "x", 1) < 0) {
		/* the pipe is full: a cancel is already pending */
	}
	errno = saved;
}

static int catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;
	unsigned i;

	if (pipe2(cancel_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;

		/* A signal our caller ignores (nohup, a background job's
		 * SIGINT) stays ignored. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -1;
	}
	/* A closed stdout shows up as EPIPE in stream_out instead. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* Streaming to our stdout and stderr. The library waits for us while we
 * write, so a reader that stops reading must not stall the run past its
 * deadline: writes are chunked to what poll says fits, and once the
 * deadline (plus a second) has passed the rest is dropped. */
struct stream {
	uint64_t deadline_ms;
	int stalled;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void stream_out(int stream, const char *buf, size_t len, void *ctx)
{
	struct stream *st = ctx;
	int fd = stream == 1 ? 1 : 2;

	while (len > 0 && !st->stalled) {
		struct pollfd p = { fd, POLLOUT, 0 };
		uint64_t now = mono_ms();
		ssize_t n;
		int rc;

		if (now >= st->deadline_ms) {
			st->stalled = 1;
			return;
		}
		rc = poll(&p, 1, (int)(st->deadline_ms - now));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			continue; /* timed out: the deadline check above ends it */
		n = write(fd, buf, len < 4096 ? len : 4096); /* PIPE_BUF: never blocks */
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == EPIPE)
				on_signal(SIGPIPE); /* like the command would: end it */
			return;
		}
		buf += n;
		len -= (size_t)n;
	}
}

static int add_bind(struct tg_sandbox_spec *spec, const char *arg, int writable,
		    struct tg_error *err)
{
	char host[4096];
	const char *colon = strchr(arg, ':');

	if (!colon)
		return tg_sandbox_spec_add_bind(spec, arg, NULL, writable, err);
	if ((size_t)(colon - arg) >= sizeof(host))
		return tg_error_set(err, TG_ERR_LIMIT, "%s: path too long",
				    writable ? "--rw" : "--ro");
	memcpy(host, arg, (size_t)(colon - arg));
	host[colon - arg] = '\0';
	return tg_sandbox_spec_add_bind(spec, host, colon + 1, writable, err);
}

static int add_env(struct tg_sandbox_spec *spec, const char *arg, struct tg_error *err)
{
	const char *val;
	char *a;
	int rc;

	if (strchr(arg, '='))
		return tg_sandbox_spec_add_env(spec, arg, err);
	val = getenv(arg);
	if (!val)
		return tg_error_set(err, TG_ERR_INVALID,
				    "--env %s: not set in the caller's environment", arg);
	if (asprintf(&a, "%s=%s", arg, val) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	rc = tg_sandbox_spec_add_env(spec, a, err);
	free(a);
	return rc;
}

enum {
	OPT_TIER = 256, OPT_MEMORY, OPT_CPUS, OPT_PIDS, OPT_TIMEOUT, OPT_RO, OPT_RW,
	OPT_WORKDIR, OPT_ENV, OPT_OUTPUT_LIMIT, OPT_TMPFS, OPT_JSON, OPT_CGROUP, OPT_HELP,
	OPT_HOST_UID, OPT_ALLOW_HOST,
};

static const struct option options[] = {
	{ "tier", required_argument, NULL, OPT_TIER },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "ro", required_argument, NULL, OPT_RO },
	{ "rw", required_argument, NULL, OPT_RW },
	{ "workdir", required_argument, NULL, OPT_WORKDIR },
	{ "env", required_argument, NULL, OPT_ENV },
	{ "output-limit", required_argument, NULL, OPT_OUTPUT_LIMIT },
	{ "tmpfs-size", required_argument, NULL, OPT_TMPFS },
	{ "cgroup-parent", required_argument, NULL, OPT_CGROUP },
	{ "host-uid", required_argument, NULL, OPT_HOST_UID },
	{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The tier must be known before the other options set its defaults' peers,
 * so it is looked up first. */
static int find_tier(int argc, char **argv)
{
	int i, egress = 0;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--tier") == 0 && i + 1 < argc)
			return tg_tier_parse(argv[i + 1]);
		if (strncmp(argv[i], "--tier=", 7) == 0)
			return tg_tier_parse(argv[i] + 7);
		egress |= strcmp(argv[i], "--allow-host") == 0 ||
			  strncmp(argv[i], "--allow-host=", 13) == 0;
	}
	return egress ? TG_TIER_STANDARD : TG_TIER_STRICT;
}

/* --allow-host rules, and the proxy that serves them. */
struct egress {
	const char *rules[TG_EGRESS_MAX_RULES];
	size_t n;
	struct tg_egress_proxy *proxy;
};

static void on_deny(void *ctx, const char *destination, const char *why)
{
	(void)ctx;
	fprintf(stderr, "toolgate run: egress denied: %s: %s\n", destination, why);
}

static int egress_start(struct egress *e, struct tg_sandbox_spec *spec, struct tg_error *err)
{
	struct tg_egress_proxy_options o;

	if (!e->n)
		return 0;
	memset(&o, 0, sizeof(o));
	o.rules = e->rules;
	o.nrules = e->n;
	o.on_deny = on_deny;
	if (tg_egress_proxy_start(&o, &e->proxy, err) < 0)
		return tg_error_wrap(err, "--allow-host");
	return tg_sandbox_spec_set_egress(spec, e->proxy, err);
}

static int apply_option(struct tg_sandbox_spec *spec, int opt, const char *arg,
			struct tg_error *err)
{
	uint64_t v;
	unsigned m;

	switch (opt) {
	case OPT_TIER:
		return 0; /* see find_tier */
	case OPT_MEMORY:
		if (parse_size(arg, &v, err) < 0)
			return tg_error_wrap(err, "--memory");
		return tg_sandbox_spec_set_memory(spec, v, err);
	case OPT_CPUS:
		if (parse_cpus(arg, &m, err) < 0)
			return tg_error_wrap(err, "--cpus");
		return tg_sandbox_spec_set_cpus(spec, m, err);
	case OPT_PIDS:
		if (parse_uint(arg, 1, 65536, &v, err) < 0)
			return tg_error_wrap(err, "--pids");
		return tg_sandbox_spec_set_pids(spec, (unsigned)v, err);
	case OPT_TIMEOUT:
		if (parse_duration(arg, &v, err) < 0)
			return tg_error_wrap(err, "--timeout");
		return tg_sandbox_spec_set_timeout(spec, v, err);
	case OPT_RO:
		return add_bind(spec, arg, 0, err);
	case OPT_RW:
		return add_bind(spec, arg, 1, err);
	case OPT_WORKDIR:
		return tg_sandbox_spec_set_workdir(spec, arg, err);
	case OPT_ENV:
		return add_env(spec, arg, err);
	case OPT_OUTPUT_LIMIT:
		if (parse_size(arg, &v, err) < 0)
			return tg_error_wrap(err, "--output-limit");
		return tg_sandbox_spec_set_output_limit(spec, v, err);
	case OPT_TMPFS:
		if (parse_size(arg, &v, err) < 0)
			return tg_error_wrap(err, "--tmpfs-size");
		return tg_sandbox_spec_set_tmpfs_size(spec, v, err);
	case OPT_CGROUP:
		return tg_sandbox_spec_set_cgroup_parent(spec, arg, err);
	case OPT_HOST_UID: {
		char ubuf[16];
		const char *colon = strchr(arg, ':');
		uint64_t uid, gid;

		if (colon && (size_t)(colon - arg) < sizeof(ubuf)) {
			memcpy(ubuf, arg, (size_t)(colon - arg));
			ubuf[colon - arg] = '\0';
		} else {
			snprintf(ubuf, sizeof(ubuf), "%.15s", arg);
		}
		if (parse_uint(ubuf, 1, 4294967294u, &uid, err) < 0 ||
		    parse_uint(colon ? colon + 1 : ubuf, 1, 4294967294u, &gid, err) < 0)
			return tg_error_wrap(err, "--host-uid");
		return tg_sandbox_spec_set_host_id(spec, (unsigned)uid, (unsigned)gid, err);
	}
	}
	return tg_error_set(err, TG_ERR_INVALID, "unknown option");
}

static int exit_status(const struct tg_sandbox_result *r)
{
	switch (r->reason) {
	case TG_REASON_SETUP_FAILED:
		if (r->exec_errno)
			return r->exec_errno == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
		return EXIT_TOOLGATE;
	case TG_REASON_TIMEOUT:
		return EXIT_TIMEOUT;
	case TG_REASON_CANCELLED:
		return 128 + (cancel_signal ? cancel_signal : SIGTERM);
	default:
		if (r->exited)
			return r->exit_code;
		return 128 + (r->signal ? r->signal : 9);
	}
}

int cmd_run(int argc, char **argv)
{
	struct tg_sandbox_spec *spec = NULL;
	struct tg_sandbox_result *res = NULL;
	struct stream stream = { 0, 0 };
	struct egress egress;
	struct tg_error err;
	int tier, opt, json = 0, rc = EXIT_TOOLGATE;

	tg_error_clear(&err);
	memset(&egress, 0, sizeof(egress));
	tier = find_tier(argc, argv);
	if (tier < 0) {
		fprintf(stderr, "toolgate run: --tier must be strict or standard\n");
		return EXIT_TOOLGATE;
	}
	if (tg_sandbox_spec_new((enum tg_tier)tier, &spec, &err) < 0) {
		fprintf(stderr, "toolgate run: %s\n", err.msg);
		return EXIT_TOOLGATE;
	}
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+h", options, NULL)) != -1) {
		if (opt == '?') {
			if (optopt)
				fprintf(stderr, "toolgate run: option %s needs a value\n",
					argv[optind - 1]);
			else
				fprintf(stderr, "toolgate run: unknown option '%s' (see --help)\n",
					argv[optind - 1]);
			goto out;
		}
		if (opt == ':' ) {
			fprintf(stderr, "toolgate run: option %s needs a value\n", argv[optind - 1]);
			goto out;
		}
		if (opt == OPT_HELP || opt == 'h') {
			usage(stdout);
			rc = 0;
			goto out;
		}
		if (opt == OPT_JSON) {
			json = 1;
			continue;
		}
		if (opt == OPT_ALLOW_HOST) {
			if (egress.n == TG_EGRESS_MAX_RULES) {
				fprintf(stderr, "toolgate run: at most %d --allow-host\n",
					TG_EGRESS_MAX_RULES);
				goto out;
			}
			egress.rules[egress.n++] = optarg;
			continue;
		}
		if (apply_option(spec, opt, optarg, &err) < 0) {
			fprintf(stderr, "toolgate run: %s\n", err.msg);
			goto out;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "toolgate run: no command given (toolgate run [options] -- CMD)\n");
		goto out;
	}
	if (tg_sandbox_spec_set_argv(spec, argc - optind, argv + optind, &err) < 0) {
		fprintf(stderr, "toolgate run: %s\n", err.msg);
		goto out;
	}
	/* alone in a cgroup v2 delegated to it (systemd-run -p Delegate=yes),
	 * out of its way, as serve does (docs/SYSTEMD.md) */
	if (tg_sandbox_cgroup_leaf(NULL, 0, &err) < 0)
		fprintf(stderr, "toolgate run: %s\n", err.msg);
	if (egress_start(&egress, spec, &err) < 0) {
		fprintf(stderr, "toolgate run: %s\n", err.msg);
		goto out;
	}
	tg_sandbox_spec_set_stdin_fd(spec, fcntl(0, F_GETFD) < 0 ? -1 : 0);
	if (catch_signals() < 0) {
		fprintf(stderr, "toolgate run: signal handlers: %s\n", strerror(errno));
		goto out;
	}
	tg_sandbox_spec_set_cancel_fd(spec, cancel_pipe[0]);
	stream.deadline_ms = mono_ms() + tg_sandbox_spec_get_timeout(spec) + 1000;
	if (!json)
		tg_sandbox_spec_set_output_fn(spec, stream_out, &stream);
	if (tg_sandbox_run(spec, &res, &err) < 0) {
		fprintf(stderr, "toolgate run: %s\n", err.msg);
		goto out;
	}
	if (json) {
		char *text = tg_sandbox_result_json(res, &err);

		if (!text) {
			fprintf(stderr, "toolgate run: %s\n", err.msg);
			goto out;
		}
		printf("%s\n", text);
		free(text);
	} else if (res->reason == TG_REASON_CANCELLED && cancel_signal == SIGPIPE) {
		/* our reader went away: as quiet as any program in a pipeline */
	} else if (res->reason == TG_REASON_CANCELLED) {
		fprintf(stderr, "toolgate run: cancelled: %s\n", strsignal(cancel_signal));
	} else if (res->reason != TG_REASON_OK) {
		fprintf(stderr, "toolgate run: %s: %s\n", tg_sandbox_reason_name(res->reason),
			res->message);
	}
	if (stream.stalled)
		fprintf(stderr, "toolgate run: our output was not being read; "
			"what came after the deadline was dropped\n");
	rc = exit_status(res);
out:
	tg_sandbox_result_free(res);
	tg_sandbox_spec_free(spec);
	tg_egress_proxy_stop(egress.proxy);
	return rc;
}
