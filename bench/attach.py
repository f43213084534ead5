#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How long memrec --pid keeps the target stopped while attaching, on the
process the attach issue names: 50 loaded libraries and 8 threads busy
allocating. Builds the program and its libraries in a temporary directory,
attaches and detaches N times, and prints each stopped time (as memrec
reports it) and the median. Also the detach's cost is part of nothing the
program sees: only the attach stops it noticeably.

    bench/attach.py [BUILD] [-n ROUNDS]
"""
import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("build", nargs="?", default=os.environ.get("MEMREC_BUILD_DIR") or
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
ap.add_argument("-n", "--rounds", type=int, default=7)
a = ap.parse_args()
memrec = os.path.join(a.build, "memrec")
d = tempfile.mkdtemp(prefix="memrec-attach-bench-")

libs = []
for i in range(50):
    src = os.path.join(d, "lib%02d.c" % i)
    with open(src, "w") as f:
        f.write("#include <stdlib.h>\nvoid *lib%02d_alloc(size_t n) { return malloc(n + %d); }\n" % (i, i))
    so = os.path.join(d, "lib%02d.so" % i)
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so, src], check=True)
    libs.append(so)
prog_src = os.path.join(d, "server.c")
with open(prog_src, "w") as f:
    f.write(r'''
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
typedef void *(*alloc_fn)(size_t);
static alloc_fn fns[64];
static int nfns;
static void *work(void *arg) {
    unsigned long i = (unsigned long)arg;
    for (;;) {
        void *p = fns[i++ % nfns](64 + i % 512);
        free(p);
    }
    return NULL;
}
int main(int argc, char **argv) {
    char name[64];
    for (int i = 1; i < argc; i++) {
        void *h = dlopen(argv[i], RTLD_NOW);
        snprintf(name, sizeof name, "lib%02d_alloc", i - 1);
        fns[nfns++] = (alloc_fn)dlsym(h, name);
    }
    pthread_t t;
    for (long i = 0; i < 8; i++) pthread_create(&t, NULL, work, (void *)i);
    printf("ready\n");
    fflush(stdout);
    pause();
    return 0;
}
''')
server = os.path.join(d, "server")
subprocess.run(["cc", "-O2", "-o", server, prog_src, "-lpthread", "-ldl"], check=True)

target = subprocess.Popen([server] + libs, stdout=subprocess.PIPE)
assert target.stdout.readline().strip() == b"ready"
maps = open("/proc/%d/maps" % target.pid).read()
nlibs = len({l.split()[-1] for l in maps.splitlines() if ".so" in l})
threads = len(os.listdir("/proc/%d/task" % target.pid))
print("target: pid %d, %d shared objects mapped, %d threads" % (target.pid, nlibs, threads))
times = []
try:
    for r in range(a.rounds):
        out = os.path.join(d, "r%d.zst" % r)
        m = subprocess.Popen([memrec, "--pid", str(target.pid), "-o", out], stderr=subprocess.PIPE)
        line = m.stderr.readline().decode()
        time.sleep(0.3)
        m.send_signal(signal.SIGINT)
        m.communicate(timeout=60)
        hit = re.search(r"stopped for ([0-9.]+) ms", line)
        if not hit:
            print("round %d: %s" % (r, line.strip()))
            continue
        times.append(float(hit.group(1)))
        print("round %d: stopped for %.1f ms" % (r, times[-1]))
        os.unlink(out)
finally:
    target.kill()
    target.wait()
if times:
    print("median stopped time over %d attaches: %.1f ms (max %.1f ms)" % (len(times), statistics.median(times), max(times)))
