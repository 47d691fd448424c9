/*
 * libFuzzer entry point: the audit log's reader (src/obs/audit.c), what
 * `toolgate audit verify` and a gateway opening its log read from a file
 * anyone with write access may have changed. Whatever the file holds,
 * verify gives a report, never crashes or reads out of bounds; and a log
 * it says holds must open, and take a record that keeps it holding.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "toolgate/audit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[] = "/tmp/tg-fuzz-audit-XXXXXX";
	static int made;
	struct tg_audit_report rep, again;
	struct tg_audit *a;
	struct tg_error err;
	int fd;

	if (!made) {
		fd = mkstemp(path);
		if (fd < 0)
			abort();
		close(fd);
		made = 1;
	}
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
	if (tg_audit_verify(path, NULL, &rep, &err) < 0)
		abort(); /* a file that exists can always be read */
	if (rep.bad_line)
		return 0;
	/* it holds: it opens, and one more record keeps it holding */
	if (tg_audit_open(path, TG_AUDIT_NOSYNC, &a, &err) < 0) {
		fprintf(stderr, "verified, but not opened: %s\n", err.msg);
		abort();
	}
	if (tg_audit_wait(a, tg_audit_append(a, "{\"kind\":\"fuzz\"}", &err), &err) < 0)
		abort();
	tg_audit_close(a);
	if (tg_audit_verify(path, NULL, &again, &err) < 0 || again.bad_line ||
	    again.last_seq != rep.last_seq + 1)
		abort();
	return 0;
}
