# SPDX-License-Identifier: MIT
"""memtui in tmux, for the tests that drive it as a person would
(test_memtui*.py): a tmux server of the test's own, memtui in a detached
session, keys sent with send-keys, the screen read with capture-pane.
Every wait polls with a timeout."""
import os
import re
import subprocess
import time

from harness import BUILD, check, check_eq

MEMTUI = os.path.join(BUILD, "memtui")
# A tmux server of our own: never the user's or another test's.
SOCKET = "memtui-test-%d" % os.getpid()
UTF8 = "C.UTF-8"


def tmux(*args, check_rc=True):
    r = subprocess.run(["tmux", "-L", SOCKET] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=30)
    if check_rc and r.returncode != 0:
        raise RuntimeError("tmux %s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def sh_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


class Tui:
    """memtui in a detached tmux session; the shell around it prints its
    exit status and the terminal's mode afterwards, then waits."""
    count = 0

    def __init__(self, args, env=None, width=120, height=40, cwd=None):
        Tui.count += 1
        self.name = "t%d" % Tui.count
        envs = {"LANG": UTF8, "LC_ALL": UTF8, "TERM": "screen", "NO_COLOR": ""}
        envs.update(env or {})
        assign = " ".join("%s=%s" % (k, sh_quote(v)) for k, v in envs.items())
        # The shell survives the Ctrl+C sent to memtui (its trap is a
        # handler, so memtui itself starts with SIGINT at its default).
        inner = "trap true INT; cd %s && env %s %s %s; echo MEMTUI-EXIT=$?; stty -a | grep -o -- '-\\?icanon' | head -1; " \
                "echo END-OF-TEST; sleep 600" % (
                    sh_quote(cwd or os.getcwd()), assign, sh_quote(MEMTUI), " ".join(sh_quote(a) for a in args))
        tmux("new-session", "-d", "-s", self.name, "-x", str(width), "-y", str(height), "sh -c %s" % sh_quote(inner))
        # Size stays what we ask, with no client attached.
        tmux("set-option", "-t", self.name, "window-size", "manual", check_rc=False)

    def keys(self, *keys):
        tmux("send-keys", "-t", self.name, *keys)

    def literal(self, text):
        tmux("send-keys", "-t", self.name, "-l", text)

    def screen(self, escapes=False):
        args = ["capture-pane", "-p", "-t", self.name]
        if escapes:
            args.insert(1, "-e")
        return tmux(*args)

    def fmt(self, f):
        return tmux("display-message", "-p", "-t", self.name, f).strip()

    def wait(self, pred, what, timeout=60):
        """Poll the screen until pred(screen) is true on a settled screen
        (the same on two captures 50 ms apart: tmux may show a screen half
        drawn); returns the screen."""
        end = time.time() + timeout
        text = ""
        while time.time() < end:
            text = self.screen()
            if pred(text):
                time.sleep(0.05)
                if self.screen() == text:
                    return text
                continue
            time.sleep(0.1)
        print("--- screen when giving up (%s) ---\n%s\n---" % (what, text))
        return None

    def wait_text(self, needle, timeout=60):
        if isinstance(needle, str):
            return self.wait(lambda s: needle in s, repr(needle), timeout)
        return self.wait(lambda s: needle.search(s) is not None, needle.pattern, timeout)

    def memtui_pid(self):
        shell = self.fmt("#{pane_pid}")
        end = time.time() + 30
        while time.time() < end:
            r = subprocess.run(["pgrep", "-P", shell], stdout=subprocess.PIPE, text=True)
            for pid in r.stdout.split():
                try:
                    with open("/proc/%s/comm" % pid) as f:
                        if f.read().strip() in ("memtui", "env"):
                            return int(pid)
                except OSError:
                    pass
            time.sleep(0.1)
        return None

    def finished(self, timeout=60):
        """Wait for memtui to end; returns (status, screen)."""
        text = self.wait_text("END-OF-TEST", timeout)
        if text is None:
            return None, ""
        m = re.search(r"MEMTUI-EXIT=(\d+)", text)
        return (int(m.group(1)) if m else None), text

    def prompt(self, key, text):
        """Open a prompt with `key`, type `text`, Enter."""
        self.keys(key)
        self.wait(lambda s: s.rstrip("\n").split("\n")[-1].strip().endswith(":"), "the prompt of " + key)
        if text:
            self.literal(text)
        self.keys("Enter")

    def quit(self):
        """q, then memtui's exit status (None if it did not end)."""
        self.keys("q")
        s = self.wait_text("MEMTUI-EXIT=")
        m = re.search(r"MEMTUI-EXIT=(\d+)", s or "")
        self.close()
        return int(m.group(1)) if m else None

    def close(self):
        tmux("kill-session", "-t", self.name, check_rc=False)


def sgr(text, param):
    """1 when some SGR sequence in text sets attribute `param` (7 reverse, 4 underline)."""
    return any(str(param) in m.split(";") for m in re.findall(r"\x1b\[([0-9;]*)m", text))


def selected_rows(tui, needle):
    """Rows in reverse video that hold needle."""
    return [ln for ln in tui.screen(escapes=True).split("\n") if sgr(ln, 7) and needle in ln]


def lines(text):
    return [line.rstrip() for line in (text or "").split("\n")]


def row(text, name):
    """The row whose name column is exactly `name` (trees, lists)."""
    for line in lines(text):
        if re.search(r"(^|\s|[-+\u25be\u25b8] )" + re.escape(name) + r"$", line):
            return line
    return None


def numbers(line):
    return [int(x) for x in re.findall(r"(?<![\w.])(\d+)(?![\w.%])", line or "")]


def restored(tui, what, status):
    code, text = tui.finished()
    check_eq(code, status, "%s: exit status" % what)
    check_eq(tui.fmt("#{alternate_on}"), "0", "%s: the alternate screen is left" % what)
    check_eq(tui.fmt("#{cursor_flag}"), "1", "%s: the cursor is visible again" % what)
    check("-icanon" not in (text or ""), "%s: the terminal is back in canonical mode (stty icanon)" % what)
