// SPDX-License-Identifier: MIT
/* Orders the recorder's events and writes them as file records (merge.h).
 * Events wait in per-stream queues until a SYNC says every smaller
 * sequence number has arrived; then they are written smallest first. Runs
 * in memrec, outside the target, so it may allocate freely. */
#include "merge.h"

#include "merge_internal.h"

/* ---- set-up ---- */

struct merge *merge_new(memfmt_writer *w, struct accounting *acct, uint64_t start_ms)
{
    struct merge *m = xcalloc(1, sizeof *m);
    m->w = w;
    m->acct = acct;
    m->start_ms = start_ms;
    m->next_thread = 1;
    m->nnodes = 1; /* id 0 is the root */
    m->startup = startup_new();
    m->pools = poolmap_new();
    m->tick_mult = 1ull << TICK_SHIFT;
    return m;
}

void merge_free(struct merge *m)
{
    if (!m) {
        return;
    }
    for (size_t i = 0; i < m->nstreams_cap; i++) {
        struct stream *s = &m->streams[i];
        for (size_t k = s->head; k < s->len; k++) {
            if (s->q[k].type == Q_RECORD) {
                free(s->q[k].rec);
            }
        }
        free(s->q);
        free(s->nodes);
    }
    free(m->streams);
    u64map_release(&m->addr_block);
    poolmap_free(m->pools);
    info_table_free(m);
    free(m->latest);
    free(m->infos);
    u64map_release(&m->node_ids);
    u64map_release(&m->tid_thread);
    free(m->free_threads);
    free(m->active);
    free(m->node_ip);
    free(m->node_parent);
    free(m->live_modules);
    startup_free(m->startup);
    mapranges_release(&m->maps);
    free(m->thr);
    free(m);
}

void merge_set_clock(struct merge *m, double ns_per_tick)
{
    /* A TSC below 1 MHz (over 1000 ns a tick) is no TSC: keep the last. */
    if (ns_per_tick > 0 && ns_per_tick < 1000) {
        m->tick_mult = (uint64_t)(ns_per_tick * (double)(1ull << TICK_SHIFT) + 0.5);
    }
}

void merge_set_cpu(struct merge *m, uint64_t user_ns, uint64_t sys_ns)
{
    m->cpu_user_ns = user_ns;
    m->cpu_sys_ns = sys_ns;
}

const struct merge_stats *merge_stats(const struct merge *m)
{
    return &m->st;
}
