// SPDX-License-Identifier: MIT
/* Other rankings of the report's call stacks (memprint --group): by
 * allocation site (the innermost frame's function, source file and line, with
 * the site's call stacks below it, like heaptrack_print's merged view) or
 * by function (inclusive and self costs from the call tree). Text only;
 * never prints but to the stream it is given. */
#ifndef GROUPS_H
#define GROUPS_H

#include <stdio.h>

#include "accounting.h"
#include "calltree.h"
#include "frames.h"
#include "report.h"

/** memprint --group: the summary of `r`, then its sections ranked by
 * function (`fr` given: a call tree of `fr` with the costs of `a`) or by
 * site (`fr` NULL); a recording without allocator time gets the TIME
 * section's "not recorded" line instead of a section of zeros, and the
 * RSS VERSUS HEAP section closes a report of every section. `o` as for
 * report_print_text(). */
void groups_print_report(const struct report *r, struct frames *fr, const struct accounting *a,
                         const struct report_options *o, FILE *out);

#endif
