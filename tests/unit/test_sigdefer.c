// SPDX-License-Identifier: MIT
/* sigdefer_classify(): a hook entered while its thread is inside the
 * recorder tells a signal handler's call from the recorder's own nested
 * call by a signal frame between the two. Checked on a real signal frame
 * (a handler run by raise() below the "recorded" frame), on a nested call
 * with no signal in between, and on stack words that hold the restorer
 * address without being a signal frame: a struct sigaction left on the
 * stack, as a frame built at -O0 leaves in the slots it never writes (the
 * recorder once took such a call for a handler's and recorded its free
 * twice). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "guard.h"
#include "sigdefer.h"

static volatile int handler_said = -1;

static void on_usr1(int sig)
{
    (void)sig;
    handler_said = sigdefer_classify(__builtin_frame_address(0));
}

/* The restorer glibc installed with our handler, as the recorder learns it. */
static void *restorer_of(int sig)
{
    struct sigaction sa;
    sigaction(sig, NULL, &sa);
    return (void *)sa.sa_restorer;
}

/* The nested call itself: its frame is the hook's. */
__attribute__((noinline)) static int classify_here(void)
{
    return sigdefer_classify(__builtin_frame_address(0));
}

/* A nested call 2 KiB below the "recorded" frame (deeper than the 1 KiB
 * under which the recorder does not look), with `words` copies of `stale`
 * in a frame between the two, where the classification scans. */
__attribute__((noinline)) static int nested_call(uintptr_t stale, int words)
{
    volatile uintptr_t pad[256];
    for (int i = 0; i < 256; i++) {
        pad[i] = i < words ? stale : 0;
    }
    int r = classify_here();
    __asm__ volatile("" : : "r"(pad) : "memory");
    return r;
}

/* The same with whole struct sigactions between, as glibc's sigaction()
 * fills them (restorer and all). */
__attribute__((noinline)) static int nested_after_sigaction(void)
{
    volatile struct sigaction sa[8];
    for (int i = 0; i < 8; i++) {
        sigaction(SIGUSR1, NULL, (struct sigaction *)&sa[i]);
    }
    int r = classify_here();
    __asm__ volatile("" : : "r"(sa) : "memory");
    return r;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    uintptr_t r = (uintptr_t)restorer_of(SIGUSR1);
    CHECK(r != 0);

    /* "Inside the recorder" from here on: this frame is the recorded call's. */
    tstate.in_hook = 1;
    tstate.frame = __builtin_frame_address(0);

    CHECK_EQ(nested_call(0, 0), 0); /* no restorer anywhere: a nested call */
    CHECK_EQ(nested_call(r, 1), 0); /* one stale restorer word */
    CHECK_EQ(nested_call(r, 256), 0); /* a whole buffer of them */
    CHECK_EQ(nested_after_sigaction(), 0); /* struct sigactions left on the stack */

    raise(SIGUSR1); /* a real signal frame between the handler and this frame */
    CHECK_EQ(handler_said, 1);

    tstate.in_hook = 0;
    tstate.frame = NULL;
    return check_summary("test_sigdefer");
}
