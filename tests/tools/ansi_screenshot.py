#!/usr/bin/env python3
"""A terminal screen as a PNG: the text of `tmux capture-pane -e -p` (ANSI
colours) drawn as an HTML page and photographed by headless Chromium.

    tests/tools/ansi_screenshot.py screen.ans docs/images/monitor.png [--columns 100 --rows 30]

Used for the pictures in docs/ (docs/monitor.md). Needs chromium
(scripts/setup.sh installs it).
"""
import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile

# xterm's 16 colours, as a dark terminal theme draws them.
PALETTE = ["#1e1e1e", "#e05561", "#8cc265", "#d18f52", "#4aa5f0", "#c162de", "#42b3c2", "#d7dae0",
           "#5c6370", "#ff616e", "#a5e075", "#f0a45d", "#4dc4ff", "#de73ff", "#4cd1e0", "#ffffff"]
FOREGROUND, BACKGROUND = "#d7dae0", "#1e1e1e"
SGR = re.compile(r"\x1b\[([0-9;]*)m")
OTHER_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def color_256(n):
    if n < 16:
        return PALETTE[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (steps[n // 36], steps[n // 6 % 6], steps[n % 6])
    level = 8 + (n - 232) * 10
    return "#%02x%02x%02x" % (level, level, level)


class Style:
    def __init__(self):
        self.reset()

    def reset(self):
        self.bold = self.reverse = False
        self.fg = self.bg = None

    def apply(self, params):
        codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                self.reset()
            elif c == 1:
                self.bold = True
            elif c == 22:
                self.bold = False
            elif c == 7:
                self.reverse = True
            elif c == 27:
                self.reverse = False
            elif 30 <= c <= 37:
                self.fg = PALETTE[c - 30]
            elif 90 <= c <= 97:
                self.fg = PALETTE[c - 90 + 8]
            elif c == 39:
                self.fg = None
            elif 40 <= c <= 47:
                self.bg = PALETTE[c - 40]
            elif 100 <= c <= 107:
                self.bg = PALETTE[c - 100 + 8]
            elif c == 49:
                self.bg = None
            elif c in (38, 48) and i + 1 < len(codes):
                if codes[i + 1] == 5 and i + 2 < len(codes):
                    value = color_256(codes[i + 2])
                    i += 2
                elif codes[i + 1] == 2 and i + 4 < len(codes):
                    value = "#%02x%02x%02x" % tuple(codes[i + 2:i + 5])
                    i += 4
                else:
                    value = None
                if c == 38:
                    self.fg = value
                else:
                    self.bg = value
            i += 1

    def css(self):
        fg, bg = self.fg or FOREGROUND, self.bg or BACKGROUND
        if self.reverse:
            fg, bg = bg, fg
        parts = ["color:" + fg]
        if bg != BACKGROUND:
            parts.append("background:" + bg)
        if self.bold:
            parts.append("font-weight:bold")
        return ";".join(parts)


def to_html(text, columns, rows):
    style = Style()
    lines = []
    for line in text.split("\n")[:rows]:
        out, at = [], 0
        line = OTHER_ESCAPE.sub(lambda m: m.group(0) if m.group(0).endswith("m") else "", line)
        for match in SGR.finditer(line):
            if match.start() > at:
                out.append('<span style="%s">%s</span>' % (style.css(), html.escape(line[at:match.start()])))
            style.apply(match.group(1))
            at = match.end()
        if at < len(line):
            out.append('<span style="%s">%s</span>' % (style.css(), html.escape(line[at:])))
        lines.append("".join(out))
    while len(lines) < rows:
        lines.append("")
    return ("<!doctype html><meta charset='utf-8'><style>"
            "body{margin:0;background:%s}"
            "pre{margin:0;padding:12px 14px;font:15px/1.25 'DejaVu Sans Mono',monospace;color:%s;"
            "width:%dch;white-space:pre}"
            "</style><pre>%s</pre>") % (BACKGROUND, FOREGROUND, columns, "\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("screen", help="the ANSI text (tmux capture-pane -e -p)")
    parser.add_argument("png", help="the picture to write")
    parser.add_argument("--columns", type=int, default=100)
    parser.add_argument("--rows", type=int, default=30)
    args = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("chromium is not installed: apt-get install chromium (scripts/setup.sh)")
    with open(args.screen, encoding="utf-8", errors="replace") as f:
        page = to_html(f.read().rstrip("\n"), args.columns, args.rows)
    with tempfile.TemporaryDirectory() as tmp:
        page_path = os.path.join(tmp, "screen.html")
        with open(page_path, "w", encoding="utf-8") as f:
            f.write(page)
        # 15px DejaVu Sans Mono: about 9.04 px a column, 18.75 px a row.
        width = int(args.columns * 9.04) + 28
        height = int(args.rows * 18.75) + 24
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--user-data-dir=" + os.path.join(tmp, "profile"),
                        "--screenshot=" + os.path.abspath(args.png), "--window-size=%d,%d" % (width, height),
                        "file://" + page_path], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=120)
    print(args.png)


if __name__ == "__main__":
    main()
