/*
 * Between the library and the sandbox's PID 1, toolgate-init (init.c):
 * the messages PID 1 sends the parent on the status pipe, a warm
 * sandbox's job, and how the child that applied the layers hands PID 1
 * over to toolgate-init when it execs it.
 *
 * The exec: descriptors at fixed numbers (SB_INIT_FD_*, -1 ones closed),
 * every other descriptor closed; argv is
 *
 *   toolgate-init TRACE:TRACE_START:LAYERS:NOFILE WORKDIR [COMMAND ARGV...]
 *
 * (decimal numbers: TOOLGATE_TRACE on or off, its clock's start in
 * CLOCK_MONOTONIC microseconds, the TG_LAYER_* bits in place, the
 * command's RLIMIT_NOFILE), and the environment is the command's; a warm
 * sandbox, which has SB_INIT_FD_JOB open, has neither command nor
 * environment here and reads them there. Both sides are built from one tree, so
 * this is not an interface to keep stable, only one to check: init
 * refuses what it cannot parse.
 */
#ifndef TG_SANDBOX_INIT_PROTO_H
#define TG_SANDBOX_INIT_PROTO_H

#include <stdint.h>

#define SB_MAX_ENV 128
#define SB_MAX_ARGV 4096
#define SB_ARG_MAX (256 * 1024) /* total bytes of argv + env */

/* What PID 1 reports to the parent on the status pipe. Each message is
 * one write of less than PIPE_BUF bytes, so it arrives whole. */
enum sb_msg_kind {
	SB_MSG_SETUP_ERROR = 1, /* text names the layer */
	SB_MSG_EXEC_ERROR,      /* err = errno of execve */
	SB_MSG_EXIT,            /* status = wait status of the command */
	SB_MSG_LAYERS,          /* status = TG_LAYER_* bits applied */
	SB_MSG_HANDOVER,        /* listener, egress: numbers in PID 1 (run.c,
				 * "The hand-over"); PID 1 waits for the answer */
	SB_MSG_TRACE,           /* text = step, err = microseconds since clone */
	SB_MSG_HELLO,           /* the child exists (clone.c's mapper waits for
				 * it); nothing for anyone else */
};

struct sb_msg {
	int kind;
	int status;
	int err;
	char text[240];
	uint64_t utime_us, stime_us; /* SB_MSG_EXIT: CPU time of the command and
				      * all it ran (prestarted: from its start) */
	int listener; /* SB_MSG_HANDOVER: the seccomp listener's number in
		       * PID 1, and the egress listening socket's (or -1) */
	int egress;
};

/* A warm sandbox's job on the job socket: this header, then argc + envc
 * NUL-terminated strings (argv, then the environment), len bytes. */
struct sb_job {
	uint32_t argc, envc, len;
};

/* toolgate-init's descriptors */
enum {
	SB_INIT_FD_STATUS = 3,   /* struct sb_msg to the parent */
	SB_INIT_FD_HANDOVER,     /* the parent's 'T' or 'S' (run.c) */
	SB_INIT_FD_STDIN,        /* the command's stdio */
	SB_INIT_FD_STDOUT,
	SB_INIT_FD_STDERR,
	SB_INIT_FD_LISTENER,     /* the seccomp listener */
	SB_INIT_FD_EGRESS,       /* the egress listening socket, or closed */
	SB_INIT_FD_EGRESS_CHAN,  /* where an 'S' forwarder sends connections */
	SB_INIT_FD_JOB,          /* a warm sandbox's job, or closed */
	SB_INIT_FD_COUNT         /* the first number past them */
};

#define SB_INIT_NAME "toolgate-init"

#endif
