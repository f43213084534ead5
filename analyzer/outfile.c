// SPDX-License-Identifier: MIT
/* memprint's output files (outfile.h): stdout, a device as it is, or a
 * regular file through a temporary and a rename. Never prints. */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int outfile_write(const char *out, const char *what, outfile_fn fn, void *ctx, char *err, size_t cap)
{
    if (strcmp(out, "-") == 0) {
        if (fn(ctx, stdout) < 0 || fflush(stdout) != 0) {
            snprintf(err, cap, "cannot write the %s: %s", what, strerror(errno));
            return -1;
        }
        return 0;
    }
    struct stat sb;
    if (stat(out, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        /* A device or a pipe (/dev/null, a FIFO): written to as it is.
         * Renaming a temporary file over it would replace it (as root,
         * /dev/null became a regular file). */
        FILE *f = fopen(out, "w");
        if (!f) {
            snprintf(err, cap, "cannot write '%s': %s", out, strerror(errno));
            return -1;
        }
        int bad = fn(ctx, f) < 0;
        bad |= fclose(f) != 0;
        if (bad) {
            snprintf(err, cap, "cannot write '%s': %s", out, strerror(errno));
            return -1;
        }
        return 0;
    }
    size_t len = strlen(out) + 16;
    char *tmp = xmalloc(len);
    snprintf(tmp, len, "%s.tmp", out);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, cap, "cannot write '%s': %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    int bad = fn(ctx, f) < 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, out) != 0) {
        int e = errno;
        unlink(tmp);
        snprintf(err, cap, "cannot write '%s': %s", out, strerror(e));
        free(tmp);
        return -1;
    }
    free(tmp);
    return 0;
}
