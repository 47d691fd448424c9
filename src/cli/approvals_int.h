/* What `toolgate approvals` shares between its files: the command
 * (approvals.c) and what it prints for a person (approvals_show.c). */
#ifndef TG_CLI_APPROVALS_INT_H
#define TG_CLI_APPROVALS_INT_H

#include <stdint.h>
#include <stdio.h>

struct tg_ticket;
struct tg_catalog;

/* How a person's view is printed: colour (a terminal, NO_COLOR unset),
 * long values whole (--full), the time it is, the catalogue (or NULL). */
struct approvals_view {
	int color, full;
	int64_t now;
	const struct tg_catalog *catalog;
};

/* 1 if f is a terminal that may be given colours: not with NO_COLOR set
 * (no-color.org), nor TERM=dumb. */
int approvals_color(FILE *f);

/* The tickets list[0, n) as a table, in the order given, each id cut to
 * its first idlen hex digits; then "N tickets". */
void approvals_table(FILE *f, const struct approvals_view *v, struct tg_ticket *list, size_t n,
		     size_t idlen);

/* Ticket t for a person: who asked, the tool (and its contract when the
 * view has a catalogue), the times, the arguments folded and their hash,
 * the anomalies, the preview rendered. Every string others chose is
 * printed in its display form (util/hidden.h). */
void approvals_ticket(FILE *f, const struct approvals_view *v, const struct tg_ticket *t);

#endif
