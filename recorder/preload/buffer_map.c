// SPDX-License-Identifier: MIT
/* The events of direct mappings (mmap, munmap, mremap, brk, sbrk; the hooks
 * are in maphooks.c), written into the calling thread's buffer. Runs inside
 * the target: no allocation; the buffer's lock is the only one taken. */
#include "buffer_map.h"

#include <stddef.h>
#include <stdint.h>

#include "buffer.h"
#include "guard.h"
#include "memwire.h"
#include "seq.h"
#include "tbuf.h"

void buffer_map(uintptr_t addr, size_t len)
{
    struct tbuf *b = tbuf_lock_mine();
    if (!b) {
        return;
    }
    uint32_t trace = tbuf_capture(b);
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    tbuf_put_numbered(b, MEMFMT_W_MAP);
    tbuf_put(b, addr);
    tbuf_put(b, len);
    tbuf_put(b, trace);
    tbuf_unlock_mine(b);
}

/* As for realloc, the buffer stays locked from begin to end: the number
 * taken before the call cannot be declared complete before it is written. */
uint64_t buffer_map_begin(void)
{
    return buffer_realloc_begin();
}

void buffer_map_end(uint64_t seq, unsigned tag, unsigned kind, uintptr_t old, size_t old_len, uintptr_t p, size_t len)
{
    struct tbuf *b = tstate.buf;
    if (!seq || !b) {
        return;
    }
    uint32_t trace = tag == MEMFMT_W_BRK && p > old ? tbuf_capture(b) : 0;
    tbuf_ensure_room(b, TBUF_EVENT_ROOM);
    b->data[b->len++] = (uint8_t)tag;
    if (tag == MEMFMT_W_UNMAP) {
        tbuf_put_seq(b, seq);
        tbuf_put(b, kind);
        tbuf_put(b, old);
        tbuf_put(b, old_len);
    } else if (tag == MEMFMT_W_MREMAP) {
        tbuf_put_seq(b, seq);
        tbuf_put_seq(b, seq_take());
        tbuf_put(b, old);
        tbuf_put(b, old_len);
        tbuf_put(b, p);
        tbuf_put(b, len);
    } else {
        /* The break: growth is numbered after the call, like an allocation;
         * shrinking before it, like a free. */
        tbuf_put_seq(b, p > old ? seq_take() : seq);
        tbuf_put(b, old);
        tbuf_put(b, p);
        tbuf_put(b, trace);
    }
    tbuf_unlock_mine(b);
}

void buffer_map_cancel(uint64_t seq)
{
    struct tbuf *b = tstate.buf;
    if (seq && b) {
        tbuf_unlock_mine(b);
    }
}
