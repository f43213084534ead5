// SPDX-License-Identifier: MIT
/* memprint --pack (packwriter.h): load the recording, symbolize every distinct
 * address of its trace tree once, then copy its records unchanged into a
 * temporary file, append the pack records, and rename the copy over the
 * output. The input is untrusted: it is read to its end without error
 * before anything is written, and everything sized here is bounded by
 * what the model holds (its nodes and modules). */
#include "packwriter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "idmap.h"
#include "memfmt.h"
#include "model.h"
#include "symbolize.h"
#include "symfiles.h"
#include "util.h"

/* The zstd level memrec writes with by default. */
#define PACK_LEVEL 3

/* A name longer than a record can hold is cut (no real name comes near). */
#define PACK_MAX_STRING (MEMFMT_MAX_RECORD - 16)

struct pack_addr {
    uint32_t module; /* model module index */
    uint64_t offset; /* return address minus the module's bias */
    uint32_t first; /* into frames */
    uint32_t count; /* 0: nothing known, not packed */
};

struct pack_build {
    const struct model *m;
    struct pack_addr *addrs;
    uint32_t naddrs;
    size_t addrs_cap;
    struct idmap by_addr;
    struct memfmt_pack_frame *frames;
    size_t nframes, frames_cap;
    const char **strings; /* [0] unused: id 0 is unknown; owned by the symbolizer or the model's pack */
    uint32_t nstrings;
    size_t strings_cap;
    struct idmap by_string;
};

static void set_err(char *err, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

static uint64_t addr_hash(uint32_t module, uint64_t offset)
{
    return idmap_mix(offset ^ idmap_mix(module));
}

static uint64_t addr_rehash(const void *ctx, uint32_t i)
{
    const struct pack_build *b = ctx;
    return addr_hash(b->addrs[i].module, b->addrs[i].offset);
}

struct addr_key {
    const struct pack_build *b;
    uint32_t module;
    uint64_t offset;
};

static int same_addr(const void *ctx, uint32_t i)
{
    const struct addr_key *k = ctx;
    return k->b->addrs[i].module == k->module && k->b->addrs[i].offset == k->offset;
}

static uint64_t string_rehash(const void *ctx, uint32_t i)
{
    const struct pack_build *b = ctx;
    return idmap_hash_str(b->strings[i]);
}

struct string_key {
    const struct pack_build *b;
    const char *s;
};

static int same_string(const void *ctx, uint32_t i)
{
    const struct string_key *k = ctx;
    return strcmp(k->b->strings[i], k->s) == 0;
}

/* The pack's string id of `s` (0 for NULL), adding it the first time. */
static uint32_t string_id(struct pack_build *b, const char *s)
{
    if (!s) {
        return 0;
    }
    xgrow((void **)&b->strings, &b->strings_cap, (size_t)b->nstrings + 2, sizeof *b->strings);
    idmap_reserve(&b->by_string, (size_t)b->nstrings + 2, string_rehash, b);
    struct string_key key = {b, s};
    size_t slot;
    uint32_t i = idmap_find(&b->by_string, idmap_hash_str(s), same_string, &key, &slot);
    if (i != IDMAP_NONE) {
        return i;
    }
    b->strings[++b->nstrings] = s;
    idmap_put(&b->by_string, slot, b->nstrings);
    return b->nstrings;
}

/* Symbolize each distinct (module, address) of the trace tree once. */
static void build(struct pack_build *b, struct symfiles *files, struct pack_stats *st)
{
    const struct model *m = b->m;
    struct sym_frame tmp[MEMFMT_MAX_PACK_FRAMES];
    for (uint32_t node = 1; node < m->nnodes; node++) {
        const struct model_node *n = &m->nodes[node];
        if (n->ip == 0 || n->module < 0 || (uint32_t)n->module >= m->nmodules) {
            continue; /* a gap, or an address in no module: nothing to pack */
        }
        uint32_t mi = (uint32_t)n->module;
        uint64_t offset = n->ip - m->modules[mi].bias;
        idmap_reserve(&b->by_addr, (size_t)b->naddrs + 1, addr_rehash, b);
        struct addr_key key = {b, mi, offset};
        size_t slot;
        if (idmap_find(&b->by_addr, addr_hash(mi, offset), same_addr, &key, &slot) != IDMAP_NONE) {
            continue;
        }
        int k = symfiles_lookup(files, node, tmp, MEMFMT_MAX_PACK_FRAMES);
        struct pack_addr a = {mi, offset, (uint32_t)b->nframes, 0};
        /* One frame with neither function nor file is what the reader
         * gives for an address the pack lacks: leave it out. */
        if (!(k == 1 && !tmp[0].function && !tmp[0].file)) {
            a.count = (uint32_t)k;
            xgrow((void **)&b->frames, &b->frames_cap, b->nframes + (size_t)k, sizeof *b->frames);
            for (int i = 0; i < k; i++) {
                b->frames[b->nframes++] = (struct memfmt_pack_frame){
                    .function = string_id(b, tmp[i].function),
                    .file = string_id(b, tmp[i].file),
                    .line = tmp[i].line,
                    .flags = tmp[i].inlined ? MEMFMT_PF_INLINED : 0,
                };
            }
            st->addresses++;
            st->frames += (uint32_t)k;
        } else {
            st->unknown++;
        }
        xgrow((void **)&b->addrs, &b->addrs_cap, (size_t)b->naddrs + 1, sizeof *b->addrs);
        b->addrs[b->naddrs] = a;
        idmap_put(&b->by_addr, slot, b->naddrs++);
    }
    st->strings = b->nstrings;
}

static void release(struct pack_build *b)
{
    free(b->addrs);
    idmap_release(&b->by_addr);
    free(b->frames);
    free(b->strings);
    idmap_release(&b->by_string);
}

/* One record, encoded here and written raw: a name may be longer than
 * the writer's input buffer (memfmt_write() takes records of 256 KiB). */
static int put_record(memfmt_writer *w, const struct memfmt_record *rec, uint8_t *buf, size_t cap)
{
    int n = memfmt_encode(rec, buf, cap);
    return n < 0 ? n : memfmt_write_raw(w, buf, (size_t)n);
}

/* The pack records, strings first (a frame names only strings before it). */
static int write_pack(memfmt_writer *w, const struct pack_build *b)
{
    size_t cap = MEMFMT_MAX_RECORD + 16;
    uint8_t *buf = xmalloc(cap);
    struct memfmt_record rec;
    int rc = 0;
    for (uint32_t i = 1; i <= b->nstrings && rc == 0; i++) {
        size_t len = strlen(b->strings[i]);
        rec.tag = MEMFMT_REC_PACK_STRING;
        rec.u.pack_string.str = b->strings[i];
        rec.u.pack_string.len = (uint32_t)(len < PACK_MAX_STRING ? len : PACK_MAX_STRING);
        rc = put_record(w, &rec, buf, cap);
    }
    for (uint32_t i = 0; i < b->naddrs && rc == 0; i++) {
        const struct pack_addr *a = &b->addrs[i];
        if (a->count == 0) {
            continue;
        }
        rec.tag = MEMFMT_REC_PACK_FRAMES;
        rec.u.pack_frames.module = b->m->modules[a->module].id;
        rec.u.pack_frames.offset = a->offset;
        rec.u.pack_frames.nframes = a->count;
        memcpy(rec.u.pack_frames.frames, &b->frames[a->first], a->count * sizeof *b->frames);
        rc = put_record(w, &rec, buf, cap);
    }
    free(buf);
    return rc;
}

/* Copy `in`'s records into `w`, leaving out an earlier pack, then add
 * this one. Returns 0, or a negative memfmt status (from reading when
 * *reading is set). */
static int copy_and_pack(memfmt_reader *rd, memfmt_writer *w, const struct pack_build *b, int cut, int *reading)
{
    const uint8_t *raw;
    size_t len;
    unsigned tag;
    int rc;
    *reading = 1;
    while ((rc = memfmt_read_raw(rd, &raw, &len, &tag)) > 0) {
        if (tag == MEMFMT_REC_PACK_STRING || tag == MEMFMT_REC_PACK_FRAMES) {
            continue;
        }
        *reading = 0;
        rc = memfmt_write_raw(w, raw, len);
        if (rc < 0) {
            return rc;
        }
        *reading = 1;
    }
    if (rc < 0 && !(cut && rc == MEMFMT_E_TRUNCATED)) {
        return rc;
    }
    *reading = 0;
    rc = write_pack(w, b);
    return rc < 0 ? rc : memfmt_writer_finish(w);
}

/* Write the copy into the open temporary file `fd`. Returns 0 or -1 (err set). */
static int write_copy(const char *in, const char *tmp, int fd, const struct model *m, const struct pack_build *b,
                      struct pack_stats *st, char *err, size_t errcap)
{
    int rc;
    memfmt_reader *rd = memfmt_reader_open(in, &rc);
    if (!rd) {
        set_err(err, errcap, "cannot read '%s': %s", in, rc == MEMFMT_E_IO ? strerror(errno) : memfmt_strerror(rc));
        return -1;
    }
    struct memfmt_header hdr = m->header;
    hdr.flags |= MEMFMT_HF_PACKED;
    memfmt_writer *w = memfmt_writer_new(fd, &hdr, PACK_LEVEL, &rc);
    int reading = 0;
    if (w) {
        rc = copy_and_pack(rd, w, b, st->cut, &reading);
    }
    if (rc < 0) {
        if (reading) {
            set_err(err, errcap, "cannot read '%s': %s at byte %llu of its data", in, memfmt_strerror(rc),
                    (unsigned long long)memfmt_reader_offset(rd));
        } else {
            int e = w ? memfmt_writer_errno(w) : 0;
            set_err(err, errcap, "cannot write '%s': %s", tmp,
                    rc == MEMFMT_E_IO && e ? strerror(e) : memfmt_strerror(rc));
        }
    } else {
        st->out_bytes = memfmt_writer_bytes(w);
    }
    memfmt_writer_free(w);
    memfmt_reader_free(rd);
    return rc < 0 ? -1 : 0;
}

/* 1 when `a` and `b` name the same file (paths equal, or one inode). */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0) {
        return 1;
    }
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int pack_file(const char *in, const char *out, struct pack_stats *st, char *err, size_t errcap)
{
    memset(st, 0, sizeof *st);
    if (same_file(in, out)) {
        set_err(err, errcap, "'%s' is both the input and the output of --pack", in);
        return -1;
    }
    /* The input is read twice (the model, then the copy): a pipe would be
     * empty the second time, and a file still growing would differ. */
    struct stat sin;
    memset(&sin, 0, sizeof sin);
    if (stat(in, &sin) == 0 && !S_ISREG(sin.st_mode)) {
        set_err(err, errcap, "cannot pack '%s': not a regular file (--pack reads its input twice)", in);
        return -1;
    }
    struct model *m = NULL;
    int err_errno = 0;
    int rc = model_load(in, &m, &err_errno);
    if (rc < 0) {
        set_err(err, errcap, "cannot read '%s': %s", in,
                rc == MEMFMT_E_IO && err_errno ? strerror(err_errno) : memfmt_strerror(rc));
        return -1;
    }
    if (m->stop_rc == MEMFMT_E_TRUNCATED && !m->has_end) {
        st->cut = 1;
        st->cut_offset = m->stop_offset;
    } else if (m->stop_rc == 0 && !m->has_end) {
        st->no_end = 1;
    } else if (m->stop_rc < 0) {
        set_err(
            err, errcap,
            "cannot pack '%s': it is %s at byte %llu of its data (only a whole file, or one cut short before its end "
            "record, is packed)",
            in, memfmt_strerror(m->stop_rc), (unsigned long long)m->stop_offset);
        model_free(m);
        return -1;
    }
    st->in_bytes = (uint64_t)sin.st_size;

    struct symbolizer *sym = symbolize_new();
    if (!sym) {
        set_err(err, errcap, "cannot start the symbolizer (libdw)");
        model_free(m);
        return -1;
    }
    struct symfiles *files = symfiles_new(m, sym);
    struct pack_build b = {.m = m, .by_addr = IDMAP_INIT, .by_string = IDMAP_INIT};
    build(&b, files, st);

    /* Next to the output, so that the rename stays on one file system. */
    size_t tlen = strlen(out) + 16;
    char *tmp = xmalloc(tlen);
    snprintf(tmp, tlen, "%s.tmp-XXXXXX", out);
    int fd = mkstemp(tmp);
    int ok = -1;
    if (fd < 0) {
        set_err(err, errcap, "cannot create '%s': %s", tmp, strerror(errno));
    } else {
        ok = write_copy(in, tmp, fd, m, &b, st, err, errcap);
        /* A recording still being written grows between the two reads:
         * its copy would hold records the pack does not cover. */
        struct stat now;
        if (ok == 0 && (stat(in, &now) != 0 || now.st_size != sin.st_size || now.st_mtim.tv_sec != sin.st_mtim.tv_sec ||
                        now.st_mtim.tv_nsec != sin.st_mtim.tv_nsec)) {
            set_err(err, errcap, "cannot pack '%s': it changed while it was read (is it still being recorded?)", in);
            ok = -1;
        }
        if (ok == 0 && fsync(fd) != 0) {
            set_err(err, errcap, "cannot write '%s': %s", tmp, strerror(errno));
            ok = -1;
        }
        if (close(fd) != 0 && ok == 0) {
            set_err(err, errcap, "cannot write '%s': %s", tmp, strerror(errno));
            ok = -1;
        }
        if (ok == 0 && rename(tmp, out) != 0) {
            set_err(err, errcap, "cannot rename '%s' to '%s': %s", tmp, out, strerror(errno));
            ok = -1;
        }
        if (ok != 0) {
            unlink(tmp);
        }
    }
    free(tmp);
    release(&b);
    symfiles_free(files);
    symbolize_free(sym);
    model_free(m);
    return ok;
}

void pack_print_stats(const struct pack_stats *st, const char *in, const char *out, FILE *f)
{
    char b1[32], b2[32];
    /* Unknown: addresses of which the symbolizer found nothing here; they
     * read as module+offset, packed or not. */
    fprintf(f,
            "packed '%s' into '%s': frames of %u addresses (%u frames, %u names), %u without symbols; "
            "%s -> %s (%+.1f%%)\n",
            in, out, st->addresses, st->frames, st->strings, st->unknown, util_bytes(b1, sizeof b1, st->in_bytes),
            util_bytes(b2, sizeof b2, st->out_bytes),
            st->in_bytes ? 100.0 * ((double)st->out_bytes - (double)st->in_bytes) / (double)st->in_bytes : 0.0);
}
