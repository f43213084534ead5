// SPDX-License-Identifier: MIT
/* The summary memrec prints after a recording, and the memprint command
 * that reads it. Part of the memrec program
 * (memrec_internal.h). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "escape.h"
#include "util.h"
#include "memrec_internal.h"

void print_summary(const struct session *s, const struct recording *r)
{
    const struct options *o = s->o;
    accounting_finish(r->acct);
    const struct acct_totals *t = accounting_totals(r->acct);
    const struct merge_stats *ms = merge_stats(r->merge);
    char leaked[32];
    util_bytes(leaked, sizeof leaked, t->live_bytes);
    /* The name comes from the program (argv[0], or /proc/PID/comm when
     * attached) and the file name from it: escaped, never raw, so that a
     * name holding ESC cannot drive the terminal. */
    char *name = esc_text(s->name);
    char *outname = esc_text(r->outname);
    if (r->is_main) {
        fprintf(stderr, "memrec: recorded '%s' (pid %d) into %s\n", name, (int)r->pid, outname);
    } else {
        fprintf(stderr, "memrec: recorded child process %d into %s\n", (int)r->pid, outname);
    }
    free(name);
    free(outname);
    if (o->sample_rate[0]) {
        fprintf(stderr, "memrec: sampled one stack per %s bytes: about %llu allocations, %llu leaked (%s)\n",
                o->sample_rate, (unsigned long long)t->allocations, (unsigned long long)t->live_blocks, leaked);
    } else {
        fprintf(stderr, "memrec: %llu allocations, %llu temporary, %llu leaked (%s)\n",
                (unsigned long long)t->allocations, (unsigned long long)t->temporary,
                (unsigned long long)t->live_blocks, leaked);
    }
    if (ms->images) {
        fprintf(stderr, "memrec: the process ran %u more program%s through exec\n", (unsigned)ms->images,
                ms->images == 1 ? "" : "s");
    }
    if (r->how == MEMFMT_END_SIGNALED) {
        fprintf(stderr, "memrec: the program was killed by signal %d (%s)\n", r->value, strsignal(r->value));
    } else if (r->how == MEMFMT_END_DETACHED && s->duration_over && r->is_main && s->reaped && !s->attached) {
        /* --duration: the recording stopped, the program ran on to its end. */
        if (WIFEXITED(s->status)) {
            fprintf(stderr,
                    "memrec: recording stopped after --duration; the program ran on and exited with status %d\n",
                    WEXITSTATUS(s->status));
        } else {
            fprintf(stderr,
                    "memrec: recording stopped after --duration; the program ran on and was killed by signal %d\n",
                    WTERMSIG(s->status));
        }
    } else if (r->how == MEMFMT_END_DETACHED) {
        fprintf(stderr, "memrec: recording stopped%s; the program is still running%s\n",
                s->duration_over ? " after --duration" : "", s->attached ? " (detached)" : "");
    } else if (r->how == MEMFMT_END_EXEC_UNRECORDED) {
        fprintf(stderr, "memrec: the process went on in a program memrec cannot record (set-user-ID, set-group-ID "
                        "or with file capabilities: the kernel drops LD_PRELOAD there); how it ended is not known\n");
    } else if (r->how == MEMFMT_END_UNKNOWN && !r->is_main) {
        fprintf(stderr, "memrec: the process ended without exiting normally (killed or crashed)\n");
    }
    if (r->failed) {
        fprintf(stderr,
                "memrec: the recording failed (see above): the file ends where writing stopped, and the "
                "figures above count only what came before; the program ran on%s\n",
                r->how == MEMFMT_END_DETACHED ? "" : " to its end");
    }
    if (ms->lost_events || r->bad_batches) {
        fprintf(stderr, "memrec: warning: %llu events lost\n",
                (unsigned long long)(ms->lost_events + (uint64_t)r->bad_batches));
    }
}

void print_next(const struct recording *r)
{
    struct stat st;
    if (r->failed && (stat(r->outname, &st) != 0 || st.st_size == 0)) {
        fputs("memrec: nothing was written to ", stderr);
        esc_text_fputs(r->outname, stderr);
        fputc('\n', stderr);
        return;
    }
    fputs("memrec: next: memprint ", stderr);
    esc_text_fputs(r->outname, stderr);
    fputs(r->failed ? " (what was written before the failure)\n" : "\n", stderr);
}
